package io.github.ratelimit.core;

import java.util.Locale;

/**
 * The rate-limit algorithms. Each one is a Lua script on Redis and a Java twin in the local backend, with the same
 * decisions for the same inputs.
 */
public enum Algorithm {

	/**
	 * Token bucket: {@code limit} tokens per {@code window} refill a bucket of {@code burst} tokens. Exact, allows
	 * bursts up to {@code burst}. State: one small hash per key.
	 */
	TOKEN_BUCKET("token-bucket", "tb"),

	/**
	 * Generic cell rate algorithm: the same limits as the token bucket, stored as one value (the theoretical arrival
	 * time). Exact and the leanest in Redis.
	 */
	GCRA("gcra", "gc"),

	/**
	 * Sliding window log: a sorted set of the stamps of admitted requests. Exact in every window of length
	 * {@code window}; optional minimum interval between requests. Memory grows with the limit.
	 */
	SLIDING_WINDOW_LOG("sliding-window-log", "sl"),

	/**
	 * Sliding window counter: the current window's count plus the previous window's count weighted by how much of it
	 * still overlaps the sliding window. Approximate (exact for evenly spread traffic), two counters per key.
	 */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", "sc"),

	/**
	 * Fixed window: one counter per aligned window. The cheapest; admits up to twice the limit across a window
	 * boundary.
	 */
	FIXED_WINDOW("fixed-window", "fw"),

	/**
	 * Concurrency: at most {@code limit} requests in flight. A permit is released by the caller, or reclaimed once it
	 * has been held longer than {@code window}.
	 */
	CONCURRENCY("concurrency", "cc");

	private final String id;

	private final String code;

	Algorithm(String id, String code) {
		this.id = id;
		this.code = code;
	}

	/**
	 * The configuration name, e.g. {@code token-bucket}.
	 * @return the id used in configuration
	 */
	public String id() {
		return this.id;
	}

	/**
	 * The two-letter code used in Redis keys and script arguments.
	 * @return the short code
	 */
	public String code() {
		return this.code;
	}

	/**
	 * Whether the algorithm supports {@code burst} (a bucket capacity different from the limit).
	 * @return true for token bucket and GCRA
	 */
	public boolean supportsBurst() {
		return this == TOKEN_BUCKET || this == GCRA;
	}

	/**
	 * Parses a configuration name, accepting the enum name too ({@code TOKEN_BUCKET}, {@code token_bucket}).
	 * @param value the name
	 * @return the algorithm
	 * @throws IllegalArgumentException naming the accepted values when the name is unknown
	 */
	public static Algorithm fromId(String value) {
		String normalized = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		for (Algorithm algorithm : values()) {
			if (algorithm.id.equals(normalized)) {
				return algorithm;
			}
		}
		StringBuilder accepted = new StringBuilder();
		for (Algorithm algorithm : values()) {
			accepted.append(accepted.length() == 0 ? "" : ", ").append(algorithm.id);
		}
		throw new IllegalArgumentException("Unknown algorithm '" + value + "'; expected one of: " + accepted);
	}

}
