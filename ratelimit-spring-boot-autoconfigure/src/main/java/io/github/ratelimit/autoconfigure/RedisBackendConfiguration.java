package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RedisOverrideStore;
import io.github.ratelimit.spring.RedisTopDenials;
import io.github.ratelimit.spring.TopDenials;
import io.lettuce.core.resource.Delay;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/** The Redis backend, on the application's Redis connection (standalone, Sentinel or Cluster as configured). */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
class RedisBackendConfiguration {

	/** Declared as its own type, so that the context sees a lifecycle bean (stopped before the connection factory). */
	@Bean
	@ConditionalOnMissingBean(RateLimitBackend.class)
	RedisRateLimitBackend rateLimitBackend(RedisConnectionFactory connectionFactory, RateLimitProperties properties) {
		LettuceMissingFailureAnalyzer.requireLettuce(connectionFactory);
		return RedisRateLimitBackend.builder(connectionFactory)
			.keyPrefix(properties.keyPrefix())
			.batching(properties.redis().batching())
			.scriptMode(properties.redis().scriptMode())
			.build();
	}

	/**
	 * The leased policies' slices, over the Redis backend: a lifecycle bean, stopped before the backend so that
	 * slices are given back while the connection is open. No default candidate: whoever asks for the
	 * {@code RateLimitBackend} (the endpoint, the warm-up, tests' tools) still gets the Redis backend; the limiter
	 * asks for this one by name.
	 */
	@Bean(defaultCandidate = false)
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisRateLimitBackend.class)
	@Conditional(LeasedPoliciesCondition.class)
	LeasingBackend rateLimitLeasingBackend(RedisRateLimitBackend backend, RateLimitPropertiesCheck checked) {
		return new LeasingBackend(backend, checked.leases());
	}

	/** Runtime overrides shared by every instance through Redis, and kept there across restarts. */
	@Bean
	@ConditionalOnMissingBean
	RedisOverrideStore rateLimitOverrideStore(RedisConnectionFactory connectionFactory,
			RateLimitProperties properties) {
		return new RedisOverrideStore(connectionFactory, properties.keyPrefix(),
				properties.overrides().reconcileInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitOverrides rateLimitOverrides(RedisOverrideStore store) {
		RateLimitOverrides overrides = new RateLimitOverrides(store);
		// applies from the first request on; a silent Redis does not hold the start (the reconcile reads them later)
		overrides.refresh(Duration.ofSeconds(2));
		return overrides;
	}

	/**
	 * Every instance's top denials combined through Redis (a lifecycle bean publishing this instance's), each call
	 * within the limiter's budget, so that a silent Redis leaves this instance's summary at once.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.top.enabled", matchIfMissing = true)
	RedisTopDenials rateLimitRedisTopDenials(RedisConnectionFactory connectionFactory, RateLimitProperties properties,
			TopDenials top) {
		RateLimitProperties.Top settings = properties.top();
		return new RedisTopDenials(connectionFactory, properties.keyPrefix(), top, settings.capacity(),
				settings.publishInterval(), properties.redis().timeout());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisBackendWarmUp rateLimitRedisWarmUp(RateLimitBackend backend) {
		return new RedisBackendWarmUp(backend);
	}

	/** Caps the Lettuce client's reconnect delay, so enforcement resumes soon after Redis is back (Lettuce: 30 s). */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ Delay.class, ClientResourcesBuilderCustomizer.class })
	static class ReconnectDelayConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitReconnectDelayCustomizer")
		ClientResourcesBuilderCustomizer rateLimitReconnectDelayCustomizer(RateLimitProperties properties) {
			Duration max = properties.redis().maxReconnectDelay();
			return (builder) -> {
				if (!max.isZero()) {
					builder.reconnectDelay(() -> Delay.exponential(Duration.ofMillis(1), max, 2, TimeUnit.MILLISECONDS));
				}
			};
		}

	}

}
