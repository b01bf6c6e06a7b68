package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds the rate limiter's circuit breaker to Resilience4j's own meters ({@code resilience4j.circuitbreaker.state},
 * {@code .calls}, {@code .failure.rate}, {@code .slow.calls}, ..., tagged {@code name="ratelimit-redis"}), as
 * Resilience4j's Spring Boot starter does for its breakers, so that its dashboards and alerts apply. The breaker is
 * put in a registry of its own, never a bean: an application's own Resilience4j configuration stays untouched.
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
		CircuitBreaker breaker = limiter.circuitBreaker();
		if (breaker == null) {
			return;
		}
		CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
		// the registry's API makes entries: make one by the breaker's name and replace it by the breaker itself
		breakers.circuitBreaker(breaker.getName());
		breakers.replace(breaker.getName(), breaker);
		TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers).bindTo(registry);
	}

}
