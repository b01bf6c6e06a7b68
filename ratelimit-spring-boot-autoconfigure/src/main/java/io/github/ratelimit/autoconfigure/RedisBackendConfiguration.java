package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The Redis backend, on the application's Redis connection (standalone, Sentinel or Cluster as configured).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
class RedisBackendConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(RedisConnectionFactory connectionFactory, RateLimitProperties properties) {
		return new RedisRateLimitBackend(connectionFactory, properties.getKeyPrefix());
	}

}
