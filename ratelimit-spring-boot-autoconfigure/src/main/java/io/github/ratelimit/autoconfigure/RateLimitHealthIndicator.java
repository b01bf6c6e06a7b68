package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the rate limiter: which backend decides, the state of the circuit breaker around Redis, and whether
 * decisions are currently degraded (made by the policies' failure modes instead of Redis). It never calls Redis.
 * <p>
 * Degraded (the last call to Redis failed, or the circuit is open) leaves the status UP by default, since the failure
 * modes exist to keep the application serving while Redis is down; with
 * {@code ratelimit.health.down-when-degraded=true} the status is DOWN while degraded. Spring Boot's own {@code redis} contributor reports Redis itself.
 */
public final class RateLimitHealthIndicator implements HealthIndicator {

	private final RateLimiter limiter;

	private final boolean downWhenDegraded;

	/**
	 * A health indicator.
	 * @param limiter the limiter
	 * @param downWhenDegraded whether degraded decisions make the status DOWN
	 */
	public RateLimitHealthIndicator(RateLimiter limiter, boolean downWhenDegraded) {
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
		health.withDetail("degraded", degraded);
		Throwable failure = limiter.lastFailure();
		if (failure != null) {
			health.withDetail("decisions", "by each policy's failure-mode: Redis is not answering")
				.withDetail("lastFailure", failure.getClass().getSimpleName() + ": " + failure.getMessage());
		}
		CircuitBreaker breaker = limiter.circuitBreaker();
		if (breaker != null) {
			CircuitBreaker.Metrics metrics = breaker.getMetrics();
			health.withDetail("circuitBreaker", breaker.getState().name())
				.withDetail("failureRate", metrics.getFailureRate())
				.withDetail("failedCalls", metrics.getNumberOfFailedCalls())
				.withDetail("notPermittedCalls", metrics.getNumberOfNotPermittedCalls());
		}
		if (degraded && this.downWhenDegraded) {
			health.down();
		}
		return health.build();
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
