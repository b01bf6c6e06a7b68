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
 * Degraded decisions leave the status UP by default, since the failure modes exist to keep the application serving
 * while Redis is down; with {@code ratelimit.health.down-when-degraded=true} the status is DOWN while the circuit is
 * open. Spring Boot's own {@code redis} contributor reports Redis itself.
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
			health.withDetail("timeout", limiter.timeout().toString());
		}
		CircuitBreaker breaker = limiter.circuitBreaker();
		if (breaker == null) {
			return health.withDetail("degraded", false).build();
		}
		CircuitBreaker.State state = breaker.getState();
		boolean degraded = state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN
				|| state == CircuitBreaker.State.HALF_OPEN;
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		health.withDetail("circuitBreaker", state.name())
			.withDetail("degraded", degraded)
			.withDetail("failureRate", metrics.getFailureRate())
			.withDetail("failedCalls", metrics.getNumberOfFailedCalls())
			.withDetail("notPermittedCalls", metrics.getNumberOfNotPermittedCalls());
		if (degraded) {
			health.withDetail("decisions", "by each policy's failure-mode (Redis is not answering)");
			if (this.downWhenDegraded && state != CircuitBreaker.State.HALF_OPEN) {
				health.down();
			}
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
