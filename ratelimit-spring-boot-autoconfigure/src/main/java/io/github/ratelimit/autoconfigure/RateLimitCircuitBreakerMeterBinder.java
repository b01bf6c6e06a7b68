package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds the limiter's circuit breakers (a registry of its own, never a bean) to Resilience4j's own meters, tagged
 * {@code name="ratelimit-redis"} (on Cluster {@code name="ratelimit-redis@<host>:<port>"} per master, following the
 * registry's additions and removals), so Resilience4j's dashboards and alerts apply.
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
