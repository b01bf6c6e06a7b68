package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import io.github.ratelimit.spring.MissingKey;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * One policy, {@code ratelimit.policies.<name>.*}; its overrides and tiers replace some of its {@link Limits}.
 *
 * @param algorithm Algorithm: token-bucket, gcra, sliding-window-log, sliding-window-counter, fixed-window or
 * concurrency.
 * @param limit Requests admitted per window; for concurrency, requests in flight.
 * @param window Window length; for concurrency, the longest a permit is held before it is reclaimed.
 * @param burst Bucket capacity for token-bucket and gcra; defaults to the limit.
 * @param minInterval Minimum time between two admitted requests of one key (sliding-window-log only).
 * @param cost Quota one request takes.
 * @param key Whom the policy counts: ip, header:Name, principal, global, @bean name, or a SpEL expression.
 * @param missingKey What happens to a request whose key cannot be resolved: shared, skip or deny.
 * @param failureMode What this policy does when Redis cannot decide; defaults to ratelimit.failure-mode.
 * @param shadow Whether the policy is checked and counted but never denies (outcome shadow_denied).
 * @param maxWait How long a denied call of a @RateLimited bean method may wait for its turn; zero never waits.
 * @param overrides Limits replacing the policy's own for specific keys.
 * @param tiers Limits by a tier name resolved from the principal or the server.
 * @param lease Leased quota: each instance takes slices of the quota from Redis and admits from them locally
 * (token-bucket and fixed-window only).
 */
public record PolicyProperties(@Nullable Algorithm algorithm, long limit, @Nullable Duration window,
		@Nullable Long burst, @Nullable Duration minInterval, @DefaultValue("1") long cost,
		@DefaultValue("ip") String key, @DefaultValue("shared") MissingKey missingKey,
		@Nullable FailureMode failureMode, boolean shadow, @DefaultValue("0s") Duration maxWait,
		@DefaultValue Map<String, Limits> overrides, @DefaultValue Tiers tiers, @DefaultValue Lease lease) {

	/**
	 * @param key How the tier name is resolved: @bean name or a SpEL expression; requests without a tier get the
	 * policy's own limits.
	 * @param limits Limits per tier name.
	 */
	public record Tiers(@Nullable String key, @DefaultValue Map<String, Limits> limits) {
	}

	/**
	 * @param enabled Whether instances admit from slices of the quota they take from Redis (token-bucket and
	 * fixed-window only; the Redis backend only). Never above the limit; a little under it while slices are held.
	 * @param maxSlice The largest slice an instance takes at once; 0 for a tenth of the limit (the burst for
	 * token-bucket), at least 1. Slices follow the instance's own rate below it.
	 * @param lapseAfter How long a slice may be spent: what a crashed instance holds back from the others at most.
	 * @param idleAfter How long without a request of a key before an instance gives its unspent slice back.
	 */
	public record Lease(boolean enabled, long maxSlice, @DefaultValue("1s") Duration lapseAfter,
			@DefaultValue("100ms") Duration idleAfter) {
	}

}
