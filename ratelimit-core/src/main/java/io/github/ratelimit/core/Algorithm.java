package io.github.ratelimit.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The rate-limit algorithms. Each one is a Lua script on Redis and a Java twin in the local backend, with the same
 * decisions for the same inputs.
 */
public enum Algorithm {

	/** Token bucket: {@code limit} tokens per {@code window} refill a bucket of {@code burst}. Exact; a short string. */
	TOKEN_BUCKET("token-bucket", "tb", "t2"),

	/** Generic cell rate algorithm: the token bucket's limits as a theoretical arrival time. Exact; a short string. */
	GCRA("gcra", "gc", "gc"),

	/** Sliding window log: a sorted set of admissions. Exact; a minimum interval; memory per request. */
	SLIDING_WINDOW_LOG("sliding-window-log", "s2", "s2"),

	/** Sliding window counter: this window's count plus the previous one's weighted. Approximate; two counters. */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", "sc", "sc"),

	/** Fixed window: a counter per aligned window. The cheapest; up to twice the limit across a boundary. */
	FIXED_WINDOW("fixed-window", "fw", "fw"),

	/** Concurrency: at most {@code limit} permits in flight, each released or reclaimed after {@code window}. */
	CONCURRENCY("concurrency", "c2", "c2");

	private final String id;

	private final String code;

	private final String keySuffix;

	Algorithm(String id, String code, String keySuffix) {
		this.id = id;
		this.code = code;
		this.keySuffix = keySuffix;
	}

	/** {@return the configuration name, e.g. {@code token-bucket}} */
	public String id() {
		return this.id;
	}

	/** {@return the two-character code naming the algorithm in scripts (the sorted sets' carry a layout version)} */
	public String code() {
		return this.code;
	}

	/**
	 * {@return the last part of the algorithm's keys: its code, or where its state's layout changed while the Lua code
	 * stayed, a code of its own ({@code t2}: the token bucket's packed string, which a 0.1.0 instance's hash commands
	 * would refuse), so that instances of two layouts never share a key}
	 */
	public String keySuffix() {
		return this.keySuffix;
	}

	/** {@return whether a {@code burst} applies: token bucket and GCRA} */
	public boolean supportsBurst() {
		return this == TOKEN_BUCKET || this == GCRA;
	}

	/** {@return whether a minimum interval applies: sliding window log} */
	public boolean supportsMinInterval() {
		return this == SLIDING_WINDOW_LOG;
	}

	/** {@return whether the state keeps an entry per unit of cost, up to {@link RateLimitPolicy#MAX_ENTRY_LIMIT}} */
	public boolean keepsEntries() {
		return this == SLIDING_WINDOW_LOG || this == CONCURRENCY;
	}

	/** {@return whether an admission holds what it took until its {@link Permit} is released: concurrency} */
	public boolean holdsPermits() {
		return this == CONCURRENCY;
	}

	/** The ids of the algorithms that match, for messages: {@code token-bucket and gcra}. */
	static String ids(Predicate<Algorithm> which, String separator) {
		return Arrays.stream(values()).filter(which).map(Algorithm::id).collect(Collectors.joining(separator));
	}

	/**
	 * {@return the algorithm of a configuration name, or of its enum name ({@code TOKEN_BUCKET}, {@code token_bucket})}
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
