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
	 * bursts up to {@code burst}. State: one small hash per key (the tokens, their time and the request that took
	 * from the bucket last).
	 */
	TOKEN_BUCKET("token-bucket", "tb"),

	/**
	 * Generic cell rate algorithm: the same limits as the token bucket, metered as a theoretical arrival time (TAT)
	 * that each admitted request pushes {@code window / limit} per unit of cost further ahead, at most {@code burst}
	 * of those intervals ahead of now. Exact and the leanest in Redis: one short string per key holding the time it
	 * was written, the backlog (the TAT minus that time, so that no absolute time is stored with fractions), the
	 * interval it was measured in and the request that added to it last.
	 */
	GCRA("gcra", "gc"),

	/**
	 * Sliding window log: a sorted set of the admitted requests (one member per unit of cost) scored by their time.
	 * Exact in every window of length {@code window}; optional minimum interval between requests. Memory grows with
	 * the limit.
	 */
	SLIDING_WINDOW_LOG("sliding-window-log", "s2"),

	/**
	 * Sliding window counter: the current window's count plus the previous window's count weighted by how much of it
	 * still overlaps the sliding window. Approximate (exact for evenly spread traffic, never more than twice the
	 * limit in any sliding window), one small hash with two counters per key.
	 */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", "sc"),

	/**
	 * Fixed window: one counter per aligned window, started again at every boundary. The cheapest; admits up to
	 * twice the limit across a window boundary.
	 */
	FIXED_WINDOW("fixed-window", "fw"),

	/**
	 * Concurrency: at most {@code limit} requests in flight, kept as the sliding window log keeps its requests (a
	 * sorted set of the permits scored by when they were taken). A permit is released by the caller, or reclaimed
	 * once it has been held longer than {@code window}.
	 */
	CONCURRENCY("concurrency", "c2");

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
	 * The two-character code used in Redis keys and script arguments. The sorted-set algorithms' codes carry the
	 * version of their key layout ({@code s2}, {@code c2}: members numbered by a sequence kept in the set), so that
	 * instances of an earlier layout never share a key with them.
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
	 * Whether a policy may set a minimum interval between two admitted requests of one key. The concurrency set
	 * shares the sliding window log's code (which honours any interval it is given) but does not accept one.
	 * @return true for the sliding window log
	 */
	public boolean supportsMinInterval() {
		return this == SLIDING_WINDOW_LOG;
	}

	/**
	 * Whether the state keeps one entry per request (per unit of cost), in a sorted set on Redis: memory grows with
	 * the limit, which is therefore bounded by {@link RateLimitPolicy#MAX_ENTRY_LIMIT}, and a refund removes the
	 * request's own entries.
	 * @return true for the sliding window log and concurrency
	 */
	public boolean keepsEntries() {
		return this == SLIDING_WINDOW_LOG || this == CONCURRENCY;
	}

	/**
	 * Whether an admitted request holds what it took until it is released (or reclaimed after {@code window}),
	 * rather than using it up: such a request is given a {@link Permit} to release.
	 * @return true for concurrency
	 */
	public boolean holdsPermits() {
		return this == CONCURRENCY;
	}

	/**
	 * The ids of the algorithms that match, for messages: {@code token-bucket and gcra}.
	 * @param which the algorithms to name
	 * @param separator what goes between two ids
	 * @return the ids in declaration order
	 */
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
