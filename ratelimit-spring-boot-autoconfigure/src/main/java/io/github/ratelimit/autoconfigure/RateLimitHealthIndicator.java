package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the rate limiter, from memory only (never a Redis call): the backend, the circuit breakers (each
 * Cluster master's under {@code shards}) and whether decisions are degraded (a circuit open or probing, or a failure
 * mode made one of the last {@value DefaultRateLimiter#RECENT_DECISIONS}). Degraded stays UP unless
 * {@code ratelimit.health.down-when-degraded}: the failure modes exist to keep serving.
 */
final class RateLimitHealthIndicator implements HealthIndicator {

	private final RateLimiter limiter;

	private final boolean downWhenDegraded;

	RateLimitHealthIndicator(RateLimiter limiter, boolean downWhenDegraded) {
		this.limiter = limiter;
		this.downWhenDegraded = downWhenDegraded;
	}

	@Override
	public Health health() {
		if (!(this.limiter instanceof DefaultRateLimiter limiter)) {
			return Health.unknown().withDetail("limiter", this.limiter.getClass().getName()).build();
		}
		Health.Builder health = Health.up().withDetail("backend", backendName(limiter.backend()));
		if (limiter.timeout() != null) {
			health.withDetail("timeout", limiter.timeout().toMillis() + "ms");
		}
		boolean degraded = limiter.degraded();
		health.withDetail("degraded", degraded)
			.withDetail("recentFailureModeDecisions", limiter.recentFailureModeDecisions());
		Throwable failure = limiter.lastFailure();
		if (failure != null) {
			health.withDetail("decisions", "by each policy's failure-mode: Redis is not answering")
				.withDetail("lastFailure", failure.getClass().getSimpleName() + ": " + failure.getMessage());
		}
		CircuitBreaker configured = limiter.circuitBreaker();
		CircuitBreakerRegistry breakers = limiter.circuitBreakers();
		if (configured != null && breakers != null) {
			breakers(health, configured, breakers);
		}
		if (degraded && this.downWhenDegraded) {
			health.down();
		}
		return health.build();
	}

	/** The breakers' states and figures: on Cluster each master's ({@code shards}) and the least healthy state. */
	private static void breakers(Health.Builder health, CircuitBreaker configured, CircuitBreakerRegistry breakers) {
		List<CircuitBreaker> all = new ArrayList<>(breakers.getAllCircuitBreakers());
		if (all.size() == 1 && all.get(0) == configured) {
			health.withDetail("circuitBreaker", configured.getState().name()).withDetails(figures(configured));
			return;
		}
		all.sort(Comparator.comparing(CircuitBreaker::getName));
		Map<String, Object> shards = new LinkedHashMap<>();
		for (CircuitBreaker breaker : all) {
			Map<String, Object> shard = new LinkedHashMap<>();
			shard.put("circuitBreaker", breaker.getState().name());
			shard.putAll(figures(breaker));
			shards.put(breaker.getName().substring(breaker.getName().indexOf('@') + 1), shard);
		}
		CircuitBreaker.State worst = all.stream()
			.map(CircuitBreaker::getState)
			.max(Comparator.comparingInt(RateLimitHealthIndicator::rank))
			.filter((state) -> rank(state) > 0)
			.orElse(CircuitBreaker.State.CLOSED);
		health.withDetail("circuitBreaker", worst.name()).withDetail("shards", shards);
	}

	private static Map<String, Object> figures(CircuitBreaker breaker) {
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("failureRate", metrics.getFailureRate());
		figures.put("failedCalls", metrics.getNumberOfFailedCalls());
		figures.put("notPermittedCalls", metrics.getNumberOfNotPermittedCalls());
		return figures;
	}

	/** How unhealthy a state is: open (forced or not) before half-open before anything else. */
	private static int rank(CircuitBreaker.State state) {
		return switch (state) {
			case OPEN, FORCED_OPEN -> 2;
			case HALF_OPEN -> 1;
			default -> 0;
		};
	}

	private static String backendName(RateLimitBackend backend) {
		if (backend instanceof RedisRateLimitBackend redis) {
			return redis.isCluster() ? "redis-cluster" : "redis";
		}
		if (backend instanceof LocalRateLimitBackend) {
			return "local";
		}
		return backend.getClass().getName();
	}

}
