package io.github.ratelimit.test;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Registers a {@link RateLimitTester} wherever the limiter is configured. This module is added with test scope, so
 * the bean exists in tests (and development-time runs from {@code src/test}) only. With
 * {@code ratelimit.enabled=false} there is no limiter and no tester.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBean({ RateLimitBackend.class, RateLimitPolicyRegistry.class })
public final class RateLimitTestAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitTester rateLimitTester(RateLimitBackend backend, RateLimitPolicyRegistry registry) {
		return new RateLimitTester(backend, registry);
	}

}
