package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the limiter talks to Redis, {@code ratelimit.redis.*}.
 *
 * @param timeout Longest a decision waits for Redis before the policies' failure modes decide.
 * @param maxReconnectDelay Longest delay between two reconnect attempts of the Lettuce client Spring Boot creates; 0
 * leaves Lettuce's default (up to 30s).
 * @param batching Whether single-policy decisions arriving while calls are in flight go as one call per policy (on
 * a Cluster, per master and policy, on Redis 7 or later).
 * @param scriptMode How the rate-limit scripts run: evalsha (any Redis) or functions (Redis 7+, FCALL of persisted,
 * replicated function libraries).
 * @param circuitBreaker The circuit breaker (Resilience4j) around Redis.
 * @param denialCache The local denial cache, which repeats a denial Redis made from memory until it ends.
 */
public record RedisBackendProperties(@DefaultValue("50ms") Duration timeout,
		@DefaultValue("1s") Duration maxReconnectDelay, @DefaultValue("true") boolean batching,
		@DefaultValue("evalsha") ScriptMode scriptMode, @DefaultValue CircuitBreaker circuitBreaker,
		@DefaultValue DenialCache denialCache) {

	/**
	 * @param enabled Whether denials are cached (Redis backend only); it never admits what Redis would deny.
	 * @param maximumSize Most policy and identity pairs whose denial is kept.
	 */
	public record DenialCache(boolean enabled, @DefaultValue("10000") long maximumSize) {
	}

	/**
	 * @param enabled Whether the circuit breaker is used; without it every decision waits up to the timeout.
	 * @param failureRateThreshold Percentage of failed calls among the last calls that opens the circuit.
	 * @param slidingWindowSize Number of most recent calls the failure rate is computed over.
	 * @param minimumNumberOfCalls Fewest calls in the window before the failure rate is considered.
	 * @param waitDurationInOpenState How long the circuit stays open before probes; also the Retry-After of a 503
	 * from a policy that fails closed.
	 * @param permittedNumberOfCallsInHalfOpenState Probe calls let through while half-open.
	 */
	public record CircuitBreaker(@DefaultValue("true") boolean enabled,
			@DefaultValue("50") float failureRateThreshold, @DefaultValue("20") int slidingWindowSize,
			@DefaultValue("5") int minimumNumberOfCalls, @DefaultValue("1s") Duration waitDurationInOpenState,
			@DefaultValue("3") int permittedNumberOfCallsInHalfOpenState) {
	}

}
