package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitHeaders;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitRejectionHandler;
import io.github.ratelimit.spring.RateLimitResponses;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.StringUtils;

/**
 * What the servlet, the reactive and the non-web integrations share: the enforcer (rules, annotations, keys), the
 * responses (headers, rejections) and the rejection handler. Declared in non-web applications too, where
 * {@code @RateLimited} bean methods use the enforcer's annotations and keys.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitWebConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitRejectionHandler rateLimitRejectionHandler(RateLimitProperties properties,
			ObjectProvider<JsonMapper> jsonMapper) {
		return new ProblemDetailRejectionHandler(properties.problem().type(),
				jsonMapper.getIfAvailable(JsonMapper::shared));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitEnforcer rateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies,
			RateLimitProperties properties, RateLimitPropertiesCheck checked) {
		return new RateLimitEnforcer(limiter, policies, checked.rules(), checked.keys(), properties.failureMode());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitResponses rateLimitResponses(RateLimitProperties properties,
			RateLimitRejectionHandler rejectionHandler) {
		RateLimitProperties.Headers headers = properties.headers();
		return new RateLimitResponses(
				new RateLimitHeaders(headers.legacy(), headers.standard(), headers.retryAfter(),
						StringUtils.hasLength(headers.partitionKeySecret()) ? headers.partitionKeySecret() : null),
				rejectionHandler, System::currentTimeMillis);
	}

}
