package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The rate-limit meters, with Micrometer and a {@link MeterRegistry}, and the circuit breakers' Resilience4j meters.
 * No tag holds an identity, key, path or address.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, RateLimiter.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitDecisionMeterHandler rateLimitDecisionMeterHandler(ObjectProvider<MeterRegistry> meterRegistry,
			RateLimitProperties properties) {
		return new RateLimitDecisionMeterHandler(meterRegistry, properties.metrics().nearLimitRatio());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitMeterBinder rateLimitMeterBinder(ObjectProvider<RateLimiter> limiter,
			ObjectProvider<RateLimitPolicyRegistry> policies) {
		return new RateLimitMeterBinder(limiter, policies);
	}

	/** The limiter's registry of breakers (never a bean) bound to {@code TaggedCircuitBreakerMetrics}. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics")
	static final class CircuitBreakerMetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitCircuitBreakerMeterBinder")
		MeterBinder rateLimitCircuitBreakerMeterBinder(ObjectProvider<RateLimiter> limiter) {
			return (registry) -> {
				if (limiter.getIfAvailable() instanceof DefaultRateLimiter rateLimiter) {
					CircuitBreakerRegistry breakers = rateLimiter.circuitBreakers();
					if (breakers != null) {
						TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers).bindTo(registry);
					}
				}
			};
		}

	}

}
