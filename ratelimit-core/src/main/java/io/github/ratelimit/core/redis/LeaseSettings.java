package io.github.ratelimit.core.redis;

import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;

/**
 * How a policy's quota is leased ({@link LeasingBackend}): the largest slice an instance takes at once, how long a
 * slice may be spent before it lapses, and after how long without a request an instance gives its slice back.
 *
 * @param maxSlice the largest slice taken at once; 0 for a tenth of the policy's capacity (at least 1)
 * @param lapseAfter how long a slice may be spent (and, for the token bucket, how long Redis keeps it on record)
 * @param idleAfter how long without a request before the unspent slice is given back
 */
public record LeaseSettings(long maxSlice, Duration lapseAfter, Duration idleAfter) {

	/** The default lapse bound: what a crashed instance can hold back from the others, at most. */
	public static final Duration DEFAULT_LAPSE_AFTER = Duration.ofSeconds(1);

	/** The default idle time before a slice is given back. */
	public static final Duration DEFAULT_IDLE_AFTER = Duration.ofMillis(100);

	/** The shortest lapse bound: a slice must outlive the round trip that takes it. */
	public static final Duration MIN_LAPSE_AFTER = Duration.ofMillis(10);

	/**
	 * @throws IllegalArgumentException naming the setting ({@code max-slice}, {@code lapse-after},
	 * {@code idle-after}) that is out of range
	 */
	public LeaseSettings {
		if (maxSlice < 0 || maxSlice > RateLimitPolicy.MAX_LIMIT) {
			throw new IllegalArgumentException(
					"max-slice must be between 0 (a tenth of the capacity) and " + RateLimitPolicy.MAX_LIMIT);
		}
		if (lapseAfter.compareTo(MIN_LAPSE_AFTER) < 0 || lapseAfter.compareTo(Duration.ofHours(1)) > 0) {
			throw new IllegalArgumentException("lapse-after must be between 10ms and 1h but was " + lapseAfter);
		}
		if (idleAfter.compareTo(Duration.ofMillis(1)) < 0 || idleAfter.compareTo(lapseAfter) > 0) {
			throw new IllegalArgumentException(
					"idle-after must be between 1ms and lapse-after (" + lapseAfter + ") but was " + idleAfter);
		}
	}

	/** The defaults: a tenth of the capacity at most, lapsing after 1 s, given back after 100 ms idle. */
	public static LeaseSettings defaults() {
		return new LeaseSettings(0, DEFAULT_LAPSE_AFTER, DEFAULT_IDLE_AFTER);
	}

	/** {@return whether an algorithm's quota can be leased exactly: the token bucket and the fixed window} */
	public static boolean supports(Algorithm algorithm) {
		return algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.FIXED_WINDOW;
	}

	/** {@return the largest slice of this policy's quota taken at once, within its capacity} */
	long maxSliceOf(RateLimitPolicy policy) {
		long max = (this.maxSlice > 0) ? this.maxSlice : policy.capacity() / 10;
		return Math.max(1, Math.min(max, policy.capacity()));
	}

}
