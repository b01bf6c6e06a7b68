package io.github.ratelimit.autoconfigure.reactive;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.reactive.RateLimitExceptionAdvice;
import io.github.ratelimit.spring.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.spring.reactive.RateLimitWebFilter;
import io.github.ratelimit.spring.reactive.ReactiveRateLimitedMethodPostProcessor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * Rate limiting for reactive (WebFlux) web applications: the {@link RateLimitWebFilter}, {@code @RateLimited}
 * methods, and the {@link RateLimitWebExceptionHandler} that answers their denials with the rejection.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEnforcer.class)
public final class RateLimitReactiveAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
	RateLimitWebFilter rateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses,
			RateLimitProperties properties) {
		return new RateLimitWebFilter(enforcer, responses, properties.filter().order());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWebExceptionHandler rateLimitWebExceptionHandler(RateLimitResponses responses) {
		return new RateLimitWebExceptionHandler(responses);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionAdvice rateLimitExceptionAdvice(RateLimitWebExceptionHandler handler) {
		return new RateLimitExceptionAdvice(handler);
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitedMethodPostProcessor.class)
	static ReactiveRateLimitedMethodPostProcessor rateLimitedMethodPostProcessor(
			ObjectProvider<RateLimitEnforcer> enforcer, ObjectProvider<RateLimitResponses> responses,
			ObjectProvider<RateLimitProperties> properties) {
		// the enforcer, the responses and the properties are looked up when the first @RateLimited bean appears
		return new ReactiveRateLimitedMethodPostProcessor(enforcer::getObject, responses::getObject,
				(policy) -> properties.getObject().maxWait(policy));
	}

}
