package io.github.ratelimit.gateway;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitResponses;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * Spring Cloud Gateway (server WebFlux) integration: the {@link PolicyRateLimiter} as the primary {@code RateLimiter}
 * and the {@code RateLimitGatewayFilter}. The configured routes and default filters using it are checked at startup:
 * an unknown policy or a route without policies fails the start, naming the property.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class, before = GatewayAutoConfiguration.class)
@ConditionalOnClass(GlobalFilter.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEnforcer.class)
public final class GatewayRateLimitAutoConfiguration {

	/** The bean name routes use to name this limiter: {@code rate-limiter: "#{@policyRateLimiter}"}. */
	public static final String RATE_LIMITER_BEAN = "policyRateLimiter";

	private static final String FILTER_NAME = "RequestRateLimiter";

	@Bean(RATE_LIMITER_BEAN)
	@Primary
	@ConditionalOnMissingBean
	PolicyRateLimiter policyRateLimiter(RateLimitEnforcer enforcer, RateLimitResponses responses,
			RateLimitPolicyRegistry policies, ConfigurationService configurationService,
			RateLimitProperties rateLimitProperties, ObjectProvider<GatewayProperties> gateway) {
		RateLimitProperties.Gateway properties = rateLimitProperties.gateway();
		PolicyRateLimiter limiter;
		try {
			limiter = new PolicyRateLimiter(enforcer, responses, policies, configurationService,
					properties.defaultPolicies());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.gateway.default-policies",
					String.join(",", properties.defaultPolicies()), ex.getMessage(), ex);
		}
		GatewayProperties routes = gateway.getIfAvailable();
		if (routes != null) {
			checkRoutes(limiter, routes, !properties.defaultPolicies().isEmpty());
		}
		return limiter;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitGatewayFilter rateLimitGatewayFilter() {
		return new RateLimitGatewayFilter();
	}

	private static void checkRoutes(PolicyRateLimiter limiter, GatewayProperties gateway, boolean hasDefaults) {
		String prefix = GatewayProperties.PREFIX;
		List<RouteDefinition> routes = gateway.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			List<FilterDefinition> filters = routes.get(i).getFilters();
			for (int j = 0; j < filters.size(); j++) {
				checkFilter(limiter, filters.get(j), prefix + ".routes[" + i + "].filters[" + j + "]", hasDefaults);
			}
		}
		List<FilterDefinition> defaults = gateway.getDefaultFilters();
		for (int j = 0; j < defaults.size(); j++) {
			checkFilter(limiter, defaults.get(j), prefix + ".default-filters[" + j + "]", hasDefaults);
		}
	}

	private static void checkFilter(PolicyRateLimiter limiter, FilterDefinition filter, String property,
			boolean hasDefaults) {
		Map<String, String> args = filter.getArgs();
		if (!FILTER_NAME.equals(filter.getName()) || !usesThisLimiter(args)) {
			return;
		}
		PolicyRateLimiter.Config config = new Binder(new MapConfigurationPropertySource(args))
			.bind(PolicyRateLimiter.CONFIGURATION_PROPERTY_NAME, PolicyRateLimiter.Config.class)
			.orElseGet(PolicyRateLimiter.Config::new);
		String policies = property + ".args[" + PolicyRateLimiter.CONFIGURATION_PROPERTY_NAME + ".policies]";
		if (config.getPolicies().isEmpty() && !hasDefaults) {
			throw new InvalidConfigurationPropertyValueException(policies, null,
					"a RequestRateLimiter filter using the policy rate limiter must name its policies "
							+ "(or set ratelimit.gateway.default-policies)");
		}
		try {
			limiter.validate(config);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(policies, String.join(",", config.getPolicies()),
					ex.getMessage(), ex);
		}
	}

	/** A filter without a {@code rate-limiter} argument uses the primary limiter: this one. */
	private static boolean usesThisLimiter(Map<String, String> args) {
		String named = args.getOrDefault("rate-limiter", args.get("rateLimiter"));
		return named == null || named.contains("@" + RATE_LIMITER_BEAN);
	}

}
