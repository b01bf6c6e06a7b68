package io.github.ratelimit.core;

import java.util.Locale;
import java.util.function.Predicate;

/**
 * The rate-limit algorithms. Each one is a Lua script on Redis and a Java twin in the local backend, with the same
 * decisions for the same inputs.
 */
public enum Algorithm {

	/**
	 * Token bucket: {@code limit} tokens per {@code window} refill a bucket of {@code burst} tokens. Exact, allows
	 * bursts up to {@code burst}; one small hash per key.
	 */
	TOKEN_BUCKET("token-bucket", "tb"),

	/**
	 * Generic cell rate algorithm: the token bucket's limits, metered as a theoretical arrival time that each admitted
	 * request pushes {@code window / limit} per unit of cost ahead, at most {@code burst} intervals ahead of now. Exact
	 * and the leanest in Redis: one short string per key.
	 */
	GCRA("gcra", "gc"),

	/**
	 * Sliding window log: a sorted set of the admitted requests (one member per unit of cost) scored by their time.
	 * Exact in every window; optional minimum interval between requests. Memory grows with the limit.
	 */
	SLIDING_WINDOW_LOG("sliding-window-log", "s2"),

	/**
	 * Sliding window counter: the current window's count plus the previous one's weighted by its overlap. Approximate
	 * (exact for evenly spread traffic, never twice the limit in any window); two counters per key.
	 */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", "sc"),

	/**
	 * Fixed window: one counter per aligned window, started again at every boundary. The cheapest; admits up to
	 * twice the limit across a window boundary.
	 */
	FIXED_WINDOW("fixed-window", "fw"),

	/**
	 * Concurrency: at most {@code limit} requests in flight (a sorted set of permits). A permit is released by the
	 * caller, or reclaimed once held longer than {@code window}.
	 */
	CONCURRENCY("concurrency", "c2");

	private final String id;

	private final String code;

	Algorithm(String id, String code) {
		this.id = id;
		this.code = code;
	}

	/** @return the configuration name, e.g. {@code token-bucket} */
	public String id() {
		return this.id;
	}

	/**
	 * The two-character code in Redis keys and script arguments; the sorted sets' codes carry their key layout's
	 * version ({@code s2}, {@code c2}), so an earlier layout never shares their keys.
	 * @return the short code
	 */
	public String code() {
		return this.code;
	}

	/** @return whether a {@code burst} (a bucket capacity other than the limit) applies: token bucket and GCRA */
	public boolean supportsBurst() {
		return this == TOKEN_BUCKET || this == GCRA;
	}

	/** @return whether a minimum interval between two admitted requests of one key applies: sliding window log */
	public boolean supportsMinInterval() {
		return this == SLIDING_WINDOW_LOG;
	}

	/**
	 * Whether the state keeps one entry per unit of cost (a sorted set), so the limit is bounded by
	 * {@link RateLimitPolicy#MAX_ENTRY_LIMIT}.
	 * @return true for the sliding window log and concurrency
	 */
	public boolean keepsEntries() {
		return this == SLIDING_WINDOW_LOG || this == CONCURRENCY;
	}

	/**
	 * Whether an admitted request holds what it took until it releases its {@link Permit} (or the window reclaims it).
	 * @return true for concurrency
	 */
	public boolean holdsPermits() {
		return this == CONCURRENCY;
	}

	/** The ids of the algorithms that match, for messages: {@code token-bucket and gcra}. */
	static String ids(Predicate<Algorithm> which, String separator) {
		StringBuilder ids = new StringBuilder();
		for (Algorithm algorithm : values()) {
			if (which.test(algorithm)) {
				ids.append(ids.length() == 0 ? "" : separator).append(algorithm.id);
			}
		}
		return ids.toString();
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
		throw new IllegalArgumentException(
				"Unknown algorithm '" + value + "'; expected one of: " + ids((algorithm) -> true, ", "));
	}

}
