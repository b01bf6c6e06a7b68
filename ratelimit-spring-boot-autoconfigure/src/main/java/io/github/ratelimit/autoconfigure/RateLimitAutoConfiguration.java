package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimiter;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Wires the rate-limit engine: the Redis backend on the application's own Redis connection when there is one, the
 * local backend otherwise (with a warning that limits are then per instance).
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnProperty(prefix = "ratelimit", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RedisBackendConfiguration.class, LocalBackendConfiguration.class, RateLimitWebConfiguration.class })
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitPolicies rateLimitPolicies(RateLimitProperties properties, BeanFactory beanFactory) {
		return RateLimitPolicies.from(properties, KeyResolvers.beans(beanFactory));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitBackend backend) {
		return new DefaultRateLimiter(backend);
	}

}
