package io.github.ratelimit.test;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Registers a {@link RateLimitTester} wherever the limiter is configured (this module has test scope). */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBean({ RateLimitBackend.class, RateLimitPolicyRegistry.class })
public final class RateLimitTestAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitTester rateLimitTester(RateLimitBackend backend, RateLimitPolicyRegistry registry) {
		return new RateLimitTester(backend, registry);
	}

}
