package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds the rate limiter's circuit breakers to Resilience4j's own meters ({@code resilience4j.circuitbreaker.state},
 * {@code .calls}, {@code .failure.rate}, {@code .slow.calls}, ..., tagged {@code name="ratelimit-redis"}, and on
 * Redis Cluster one breaker per master, {@code name="ratelimit-redis@<host>:<port>"}), as Resilience4j's Spring Boot
 * starter does for its breakers, so that its dashboards and alerts apply. The limiter's breakers live in a registry
 * of its own, never a bean: an application's own Resilience4j configuration stays untouched. A master's meters come
 * when its breaker is made and go when it is dropped (the master no longer serves slots).
 */
final class RateLimitCircuitBreakerMeterBinder implements MeterBinder {

	private final ObjectProvider<RateLimiter> limiter;

	RateLimitCircuitBreakerMeterBinder(ObjectProvider<RateLimiter> limiter) {
		this.limiter = limiter;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		if (!(this.limiter.getIfAvailable() instanceof DefaultRateLimiter limiter)) {
			return;
		}
		CircuitBreakerRegistry breakers = limiter.circuitBreakers();
		if (breakers != null) {
			TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers).bindTo(registry);
		}
	}

}
