package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitHeaders;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitRejectionHandler;
import io.github.ratelimit.spring.RateLimitRule;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.StringUtils;

/**
 * What the servlet, the reactive and the non-web integrations share: the enforcer (rules, annotations, keys,
 * headers) and the rejection handler. Declared in non-web applications too, where {@code @RateLimited} bean methods
 * use the enforcer's annotations and keys.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitWebConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitRejectionHandler rateLimitRejectionHandler(RateLimitProperties properties,
			ObjectProvider<JsonMapper> jsonMapper) {
		return new ProblemDetailRejectionHandler(properties.getProblem().getType(),
				jsonMapper.getIfAvailable(JsonMapper::shared));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitEnforcer rateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies,
			RateLimitProperties properties, RateLimitRejectionHandler rejectionHandler, BeanFactory beanFactory) {
		RateLimitProperties.Headers headers = properties.getHeaders();
		return new RateLimitEnforcer(limiter, policies, rules(properties, policies),
				new RateLimitHeaders(headers.isLegacy(), headers.isStandard(), headers.isRetryAfter(),
						StringUtils.hasLength(headers.getPartitionKeySecret()) ? headers.getPartitionKeySecret() : null),
				rejectionHandler, KeyResolvers.beans(beanFactory, properties), System::currentTimeMillis,
				properties.getFailureMode());
	}

	/**
	 * The filter rules, checked against the configured policies.
	 * @param properties the properties
	 * @param policies the configured policies
	 * @return the rules
	 * @throws InvalidConfigurationPropertyValueException naming the property at fault
	 */
	static List<RateLimitRule> rules(RateLimitProperties properties, RateLimitPolicyRegistry policies) {
		List<RateLimitRule> rules = new ArrayList<>();
		List<RateLimitProperties.Rule> sources = properties.getFilter().getRules();
		for (int i = 0; i < sources.size(); i++) {
			RateLimitProperties.Rule source = sources.get(i);
			String property = "ratelimit.filter.rules[" + i + "]";
			if (source.getPaths().isEmpty()) {
				throw new InvalidConfigurationPropertyValueException(property + ".paths", null,
						"at least one path pattern is required");
			}
			if (source.getPolicies().isEmpty()) {
				throw new InvalidConfigurationPropertyValueException(property + ".policies", null,
						"at least one policy is required");
			}
			for (String name : source.getPolicies()) {
				if (!policies.contains(name)) {
					throw new InvalidConfigurationPropertyValueException(property + ".policies",
							String.join(",", source.getPolicies()),
							"unknown policy '" + name + "'; configured policies: " + policies.names());
				}
			}
			try {
				rules.add(RateLimitRule.of(source.getPaths(), source.getMethods(), source.getPolicies()));
			}
			catch (RuntimeException ex) {
				throw new InvalidConfigurationPropertyValueException(property + ".paths",
						String.join(",", source.getPaths()), ex.getMessage(), ex);
			}
		}
		return rules;
	}

}
