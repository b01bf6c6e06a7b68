package io.github.ratelimit.gateway;

import java.util.List;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitResponses;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the auto-configuration registers, when it backs off, and how it refuses bad defaults (the in-memory backend:
 * no Redis needed to wire).
 */
class GatewayRateLimitAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				GatewayRateLimitAutoConfiguration.class))
		.withUserConfiguration(GatewayConfigurationService.class)
		.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=5",
				"ratelimit.policies.api.window=1m");

	@Test
	void registersThePolicyRateLimiterAndTheGlobalFilter() {
		this.runner.withPropertyValues("ratelimit.gateway.default-policies=api").run((context) -> {
			assertThat(context).hasSingleBean(RateLimitGatewayFilter.class);
			assertThat(context).hasBean(GatewayRateLimitAutoConfiguration.RATE_LIMITER_BEAN);
			PolicyRateLimiter limiter = context.getBean(PolicyRateLimiter.class);
			assertThat(limiter.configFor("any-route").getPolicies()).containsExactly("api");
		});
	}

	@Test
	void anUnknownDefaultPolicyFailsTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.gateway.default-policies=api,nope").run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof InvalidConfigurationPropertyValueException) && failure.getCause() != null) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(InvalidConfigurationPropertyValueException.class);
			assertThat(((InvalidConfigurationPropertyValueException) failure).getName())
				.isEqualTo("ratelimit.gateway.default-policies");
			assertThat(failure.getMessage()).contains("unknown policy 'nope'");
		});
	}

	@Test
	void backsOffForALimiterOfTheApplication() {
		this.runner.withUserConfiguration(OwnLimiter.class).run((context) -> {
			assertThat(context).hasSingleBean(PolicyRateLimiter.class);
			assertThat(context).hasBean("ownLimiter");
			assertThat(context).doesNotHaveBean(GatewayRateLimitAutoConfiguration.RATE_LIMITER_BEAN);
		});
	}

	@Test
	void offWithTheRateLimiter() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(PolicyRateLimiter.class);
			assertThat(context).doesNotHaveBean(RateLimitGatewayFilter.class);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class GatewayConfigurationService {

		@Bean
		ConfigurationService gatewayConfigurationService(BeanFactory beanFactory) {
			return new ConfigurationService(beanFactory, () -> null, () -> null);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLimiter {

		@Bean
		PolicyRateLimiter ownLimiter(RateLimitEnforcer enforcer, RateLimitResponses responses,
				RateLimitPolicyRegistry policies, ConfigurationService configurationService) {
			return new PolicyRateLimiter(enforcer, responses, policies, configurationService, List.of("api"));
		}

	}

}
