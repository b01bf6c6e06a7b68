package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.RateLimiter;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code ratelimit} health contributor, with Spring Boot's health support on the class path. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnEnabledHealthIndicator("ratelimit")
// bean name "ratelimitHealthIndicator": the contributor is "ratelimit" in /actuator/health
class RateLimitHealthConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "ratelimitHealthIndicator")
	RateLimitHealthIndicator ratelimitHealthIndicator(RateLimiter limiter, RateLimitProperties properties) {
		return new RateLimitHealthIndicator(limiter, properties.health().downWhenDegraded());
	}

}
