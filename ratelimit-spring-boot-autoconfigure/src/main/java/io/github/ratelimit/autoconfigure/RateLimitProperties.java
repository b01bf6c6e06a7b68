package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of rate limiting, under the prefix {@code ratelimit}.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/**
	 * Whether rate limiting is enabled.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every Redis key the limiter writes. No spaces or braces.
	 */
	private String keyPrefix = RateLimitKeys.DEFAULT_PREFIX;

	/**
	 * Rate-limit policies by name.
	 */
	private Map<String, Policy> policies = new LinkedHashMap<>();

	private final Local local = new Local();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, Policy> policies) {
		this.policies = policies;
	}

	public Local getLocal() {
		return this.local;
	}

	/**
	 * One policy.
	 */
	public static class Policy {

		/**
		 * Algorithm: token-bucket, gcra, sliding-window-log, sliding-window-counter, fixed-window or concurrency.
		 */
		private @Nullable String algorithm;

		/**
		 * Requests admitted per window; for concurrency, requests in flight.
		 */
		private long limit;

		/**
		 * Window length; for concurrency, the longest a permit is held before it is reclaimed.
		 */
		private @Nullable Duration window;

		/**
		 * Bucket capacity for token-bucket and gcra. Defaults to the limit.
		 */
		private @Nullable Long burst;

		/**
		 * Minimum time between two admitted requests of one key (sliding-window-log only).
		 */
		private @Nullable Duration minInterval;

		/**
		 * Quota one request takes.
		 */
		private long cost = 1;

		public @Nullable String getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable String algorithm) {
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

	}

	/**
	 * The in-memory backend, used when the application has no Redis connection.
	 */
	public static class Local {

		/**
		 * Most keys kept in memory; the least used beyond it are forgotten.
		 */
		private long maximumKeys = LocalRateLimitBackend.DEFAULT_MAXIMUM_KEYS;

		public long getMaximumKeys() {
			return this.maximumKeys;
		}

		public void setMaximumKeys(long maximumKeys) {
			this.maximumKeys = maximumKeys;
		}

	}

}
