package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;

/**
 * How the limiter talks to Redis, {@code ratelimit.redis.*}: its time budget, its circuit breaker, batching, the
 * scripts' mode, the client's reconnects and the local denial cache.
 */
public class RedisBackendProperties {

	/**
	 * Longest a decision waits for Redis before the policies' failure modes decide (spring.data.redis.timeout is
	 * never waited for).
	 */
	private Duration timeout = Duration.ofMillis(50);

	/**
	 * Longest delay between two reconnect attempts of the Lettuce client Spring Boot creates (Lettuce's own grows
	 * to 30s, delaying enforcement that long after Redis is back); 0 leaves Lettuce's default.
	 */
	private Duration maxReconnectDelay = Duration.ofSeconds(1);

	/**
	 * Whether single-policy decisions are batched on a standalone or Sentinel Redis: those that arrive while calls
	 * are in flight go as one call per policy (nothing waits for a batch to fill; each decision stays atomic, in
	 * arrival order). A Cluster never batches.
	 */
	private boolean batching = true;

	/**
	 * How the rate-limit scripts run: 'evalsha' (any Redis) or 'functions' (Redis 7+ and Lettuce: FCALL of function
	 * libraries, persisted and replicated, so a promoted replica has them). 'functions' on an older Redis fails the
	 * start, or every decision when Redis did not answer at startup.
	 */
	private ScriptMode scriptMode = ScriptMode.EVALSHA;

	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	private final DenialCache denialCache = new DenialCache();

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public Duration getMaxReconnectDelay() {
		return this.maxReconnectDelay;
	}

	public void setMaxReconnectDelay(Duration maxReconnectDelay) {
		this.maxReconnectDelay = maxReconnectDelay;
	}

	public boolean isBatching() {
		return this.batching;
	}

	public void setBatching(boolean batching) {
		this.batching = batching;
	}

	public ScriptMode getScriptMode() {
		return this.scriptMode;
	}

	public void setScriptMode(ScriptMode scriptMode) {
		this.scriptMode = scriptMode;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public DenialCache getDenialCache() {
		return this.denialCache;
	}


	/**
	 * The local denial cache: a denial Redis made until a time is repeated from memory until then, without a Redis
	 * call. Off by default: quota given back on another instance is seen only when the cached denial ends.
	 */
	public static class DenialCache {

		/**
		 * Whether denials are cached (Redis backend only). Never admits; denies what Redis would deny while only
		 * requests take quota. Off by default: quota given back elsewhere is seen only when the cached denial ends.
		 */
		private boolean enabled = false;

		/** Most policy and identity pairs whose denial is kept; beyond it the least useful are evicted. */
		private long maximumSize = 10_000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public long getMaximumSize() {
			return this.maximumSize;
		}

		public void setMaximumSize(long maximumSize) {
			this.maximumSize = maximumSize;
		}

	}

	/**
	 * The circuit breaker (Resilience4j) around Redis: after repeated failures decisions stop waiting on Redis and
	 * follow the failure modes at once, until probes find Redis answering again.
	 */
	public static class CircuitBreaker {

		/** Whether the circuit breaker is used. Without it every decision tries Redis and waits up to the timeout. */
		private boolean enabled = true;

		/** Percentage of failed calls (errors and timeouts) among the last calls that opens the circuit. */
		private float failureRateThreshold = 50;

		/** Number of most recent calls the failure rate is computed over. */
		private int slidingWindowSize = 20;

		/** Fewest calls in the window before the failure rate is considered. */
		private int minimumNumberOfCalls = 5;

		/**
		 * How long the circuit stays open before probes try Redis again. Also the Retry-After of a 503 from a
		 * policy that fails closed.
		 */
		private Duration waitDurationInOpenState = Duration.ofSeconds(1);

		/**
		 * Probe calls let through while half-open; when enough of them succeed the circuit closes and enforcement
		 * resumes.
		 */
		private int permittedNumberOfCallsInHalfOpenState = 3;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedNumberOfCallsInHalfOpenState() {
			return this.permittedNumberOfCallsInHalfOpenState;
		}

		public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
			this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
		}

	}

}
