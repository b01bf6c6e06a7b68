package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The in-memory backend when there is no Redis connection (imported after {@link RedisBackendConfiguration}). */
@Configuration(proxyBeanMethods = false)
class LocalBackendConfiguration {

	private static final Log logger = LogFactory.getLog(LocalBackendConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(RateLimitProperties properties) {
		logger.warn("No Redis connection: rate limits are kept in this instance's memory and are NOT shared with "
				+ "other instances. Add spring-boot-starter-data-redis and configure spring.data.redis.* to share them.");
		return new LocalRateLimitBackend(properties.local().maximumKeys(), LocalRateLimitBackend.systemClock());
	}

}
