package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import io.github.ratelimit.spring.MissingKey;
import org.jspecify.annotations.Nullable;

/**
 * One policy of {@code ratelimit.policies}: {@code ratelimit.policies.<name>.*}. Overrides and tiers replace some of
 * its limits ({@link Limits}: {@code limit}, {@code window}, {@code burst}, {@code min-interval}; the rest is the
 * policy's).
 */
public class PolicyProperties {

	/** Algorithm: token-bucket, gcra, sliding-window-log, sliding-window-counter, fixed-window or concurrency. */
	private @Nullable Algorithm algorithm;

	/** Requests admitted per window; for concurrency, requests in flight. */
	private long limit;

	/** Window length; for concurrency, the longest a permit is held before it is reclaimed. */
	private @Nullable Duration window;

	/** Bucket capacity for token-bucket and gcra. Defaults to the limit. */
	private @Nullable Long burst;

	/** Minimum time between two admitted requests of one key (sliding-window-log only). */
	private @Nullable Duration minInterval;

	/** Quota one request takes. */
	private long cost = 1;

	/**
	 * Whom the policy counts: ip, header:<Name>, principal, global, @<KeyResolver bean name>, or a SpEL
	 * expression over #request and #principal.
	 */
	private String key = "ip";

	/**
	 * What happens to a request whose key cannot be resolved: shared (all such requests count as one
	 * 'anonymous' identity), skip (the policy does not apply) or deny (401 without a principal, else 400).
	 */
	private MissingKey missingKey = MissingKey.SHARED;

	/** What this policy does when Redis cannot decide: open, closed or local. Defaults to ratelimit.failure-mode. */
	private @Nullable FailureMode failureMode;

	/** Shadow mode: checked and counted but never denying (outcome shadow_denied), to roll out a new limit safely. */
	private boolean shadow;

	/**
	 * How long a denied call of a @RateLimited bean method (not a controller's) may wait for its turn, retrying
	 * after each retry-after, before it throws. Zero: never wait. The annotation's maxWait takes precedence.
	 */
	private Duration maxWait = Duration.ZERO;

	/**
	 * Limits replacing the policy's own for specific keys (e.g. one enterprise customer's API key). Use the
	 * bracket notation for keys with special characters: overrides."[key-123]".limit=1000.
	 */
	private Map<String, Limits> overrides = new LinkedHashMap<>();

	private final Tiers tiers = new Tiers();

	public @Nullable Algorithm getAlgorithm() {
		return this.algorithm;
	}

	public void setAlgorithm(@Nullable Algorithm algorithm) {
		this.algorithm = algorithm;
	}

	public long getLimit() {
		return this.limit;
	}

	public void setLimit(long limit) {
		this.limit = limit;
	}

	public @Nullable Duration getWindow() {
		return this.window;
	}

	public void setWindow(@Nullable Duration window) {
		this.window = window;
	}

	public @Nullable Long getBurst() {
		return this.burst;
	}

	public void setBurst(@Nullable Long burst) {
		this.burst = burst;
	}

	public @Nullable Duration getMinInterval() {
		return this.minInterval;
	}

	public void setMinInterval(@Nullable Duration minInterval) {
		this.minInterval = minInterval;
	}

	public long getCost() {
		return this.cost;
	}

	public void setCost(long cost) {
		this.cost = cost;
	}

	public String getKey() {
		return this.key;
	}

	public void setKey(String key) {
		this.key = key;
	}

	public @Nullable FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(@Nullable FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public boolean isShadow() {
		return this.shadow;
	}

	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public MissingKey getMissingKey() {
		return this.missingKey;
	}

	public void setMissingKey(MissingKey missingKey) {
		this.missingKey = missingKey;
	}

	public Map<String, Limits> getOverrides() {
		return this.overrides;
	}

	public void setOverrides(Map<String, Limits> overrides) {
		this.overrides = overrides;
	}

	public Tiers getTiers() {
		return this.tiers;
	}

	/** Tiers: limits by a tier name resolved from the principal or the server (never from what the client sets). */
	public static class Tiers {

		/**
		 * How the tier name is resolved: @<KeyResolver bean name> or a SpEL expression, typically over #principal.
		 * Requests without a known tier get the policy's own limits.
		 */
		private @Nullable String key;

		/** Limits per tier name. */
		private Map<String, Limits> limits = new LinkedHashMap<>();

		public @Nullable String getKey() {
			return this.key;
		}

		public void setKey(@Nullable String key) {
			this.key = key;
		}

		public Map<String, Limits> getLimits() {
			return this.limits;
		}

		public void setLimits(Map<String, Limits> limits) {
			this.limits = limits;
		}

	}

}
