package io.github.ratelimit.autoconfigure.servlet;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.servlet.PermitReleaseHandlerInterceptor;
import io.github.ratelimit.spring.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.spring.servlet.RateLimitFilter;
import io.github.ratelimit.spring.servlet.ServletRateLimitedMethodPostProcessor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingFilterBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.handler.MappedInterceptor;

/**
 * Rate limiting for servlet web applications: the {@link RateLimitFilter}, {@code @RateLimited} methods and, with
 * Spring MVC, the {@link RateLimitExceptionResolver} and the {@link PermitReleaseHandlerInterceptor}.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEnforcer.class)
public final class RateLimitServletAutoConfiguration {

	@Bean
	@ConditionalOnMissingFilterBean(RateLimitFilter.class)
	@ConditionalOnBooleanProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitEnforcer enforcer,
			RateLimitResponses responses, RateLimitProperties properties) {
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(
				new RateLimitFilter(enforcer, responses));
		registration.setOrder(properties.filter().order());
		return registration;
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitedMethodPostProcessor.class)
	static ServletRateLimitedMethodPostProcessor rateLimitedMethodPostProcessor(
			ObjectProvider<RateLimitEnforcer> enforcer, ObjectProvider<RateLimitResponses> responses,
			ObjectProvider<RateLimitProperties> properties) {
		// the enforcer, the responses and the properties are looked up when the first @RateLimited bean appears
		return new ServletRateLimitedMethodPostProcessor(enforcer::getObject, responses::getObject,
				(policy) -> properties.getObject().maxWait(policy));
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(DispatcherServlet.class)
	static class MvcConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RateLimitExceptionResolver rateLimitExceptionResolver(RateLimitResponses responses) {
			return new RateLimitExceptionResolver(responses);
		}

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitPermitReleaseInterceptor")
		MappedInterceptor rateLimitPermitReleaseInterceptor() {
			return new MappedInterceptor(null, new PermitReleaseHandlerInterceptor());
		}

	}

}
