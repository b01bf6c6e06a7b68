package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.spring.BeanRateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication;
import org.springframework.context.annotation.Bean;

/** {@link io.github.ratelimit.spring.RateLimited} bean methods in a non-web application. */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnNotWebApplication
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEnforcer.class)
public final class RateLimitMethodAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(RateLimitedMethodPostProcessor.class)
	static BeanRateLimitedMethodPostProcessor rateLimitedMethodPostProcessor(ObjectProvider<RateLimitEnforcer> enforcer,
			ObjectProvider<RateLimitProperties> properties) {
		// the enforcer and the properties are looked up when the first @RateLimited bean appears
		return new BeanRateLimitedMethodPostProcessor(enforcer::getObject,
				(policy) -> properties.getObject().maxWait(policy));
	}

}
