package io.github.ratelimit.autoconfigure.servlet;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.spring.servlet.RateLimitFilter;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.handler.MappedInterceptor;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitServletAutoConfigurationTests {

	// a sliding window log: a fixed window's boundary (each whole minute) between two checks would refill it
	private static final String[] POLICY = { "ratelimit.policies.api.algorithm=sliding-window-log",
			"ratelimit.policies.api.limit=1", "ratelimit.policies.api.window=1m" };

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitServletAutoConfiguration.class))
		.withPropertyValues(POLICY);

	@AfterEach
	void resetRequest() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void servletApplicationGetsTheFilterTheMethodInterceptionAndTheExceptionHandling() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
			assertThat(registration.getFilter()).isInstanceOf(RateLimitFilter.class);
			assertThat(registration.getOrder()).isEqualTo(-90);
			assertThat(registration.isEnabled()).isTrue();
			assertThat(context).hasSingleBean(RateLimitedMethodPostProcessor.class)
				.hasSingleBean(RateLimitExceptionResolver.class)
				.hasBean("rateLimitPermitReleaseInterceptor");
			assertThat(context.getBean(RateLimitExceptionResolver.class).getOrder())
				.isEqualTo(RateLimitExceptionResolver.DEFAULT_ORDER);
			assertThat(context.getBean("rateLimitPermitReleaseInterceptor", MappedInterceptor.class)
				.getIncludePathPatterns()).isNull();
		});
	}

	@Test
	void filterOrderIsConfigurable() {
		this.runner.withPropertyValues("ratelimit.filter.order=-110")
			.run((context) -> assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isEqualTo(-110));
	}

	@Test
	void nothingOutsideServletApplications() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitServletAutoConfiguration.class))
			.withPropertyValues(POLICY)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitedMethodPostProcessor.class)
				.doesNotHaveBean(HandlerExceptionResolver.class));
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitServletAutoConfiguration.class))
			.withPropertyValues(POLICY)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitedMethodPostProcessor.class)
				.doesNotHaveBean(HandlerExceptionResolver.class));
	}

	@Test
	void offWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.withUserConfiguration(RateLimitedBeanConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(RateLimitEnforcer.class)
					.doesNotHaveBean(FilterRegistrationBean.class)
					.doesNotHaveBean(RateLimitedMethodPostProcessor.class)
					.doesNotHaveBean(RateLimitExceptionResolver.class);
				assertThat(AopUtils.isAopProxy(context.getBean(Greeter.class))).isFalse();
			});
	}

	@Test
	void filterOffLeavesTheMethodsLimited() {
		this.runner.withPropertyValues("ratelimit.filter.enabled=false")
			.withUserConfiguration(RateLimitedBeanConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(FilterRegistrationBean.class)
					.hasSingleBean(RateLimitedMethodPostProcessor.class)
					.hasSingleBean(RateLimitExceptionResolver.class)
					.hasBean("rateLimitPermitReleaseInterceptor");
				assertLimited(context.getBean(Greeter.class));
			});
	}

	@Test
	void rateLimitedBeansAreProxiedAndLimitedInAndOutsideRequests() {
		this.runner.withUserConfiguration(RateLimitedBeanConfiguration.class).run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isCglibProxy(greeter)).isTrue();
			// outside a request the ip key finds no identity: the calls share one (missing-key: shared)
			assertThat(greeter.greet("outside a request")).isEqualTo("hello outside a request");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> greeter.greet("outside a request"));
			assertLimited(greeter);
		});
	}

	@Test
	void enforcerAndBackendAreRegularBeansSeenByEveryPostProcessor() {
		this.runner.withUserConfiguration(RateLimitedBeanConfiguration.class, RecordingPostProcessor.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(RecordingPostProcessor.seen).contains("rateLimitEnforcer", "rateLimiter",
						"rateLimitBackend", "rateLimitPolicies");
			});
	}

	@Test
	void backsOffForTheApplicationsOwnBeans() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(FilterRegistrationBean.class)).isSameAs(context.getBean("myFilter"));
			assertThat(context).hasSingleBean(RateLimitExceptionResolver.class)
				.hasBean("myResolver")
				.hasSingleBean(RateLimitedMethodPostProcessor.class)
				.hasBean("myPostProcessor");
		});
		this.runner.withUserConfiguration(UserFilterBean.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(FilterRegistrationBean.class)
				.hasSingleBean(RateLimitFilter.class);
		});
	}

	@Test
	void unknownPolicyInARuleFailsNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].paths=/api/**",
				"ratelimit.filter.rules[0].policies=api,nope")
			.run(failsOnProperty("ratelimit.filter.rules[0].policies", "unknown policy 'nope'"));
	}

	@Test
	void unknownPolicyInAnAnnotationFailsNamingTheMethod() {
		this.runner.withUserConfiguration(UnknownPolicyConfiguration.class)
			.run(failsWith("@RateLimited on " + UnknownPolicy.class.getName() + ".call() names unknown policy 'nope'"));
	}

	@Test
	void invalidInlinePolicyInAnAnnotationFailsNamingTheMethod() {
		this.runner.withUserConfiguration(InvalidInlinePolicyConfiguration.class)
			.run(failsWith("@RateLimited on " + InvalidInlinePolicy.class.getName() + ".call()"));
	}

	@Test
	void invalidKeyExpressionFailsNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.x.algorithm=gcra", "ratelimit.policies.x.limit=5",
				"ratelimit.policies.x.window=1s", "ratelimit.policies.x.key=#request.header('X-Api-Key'")
			.run(failsOnProperty("ratelimit.policies.x.key"));
	}

	@Test
	void nonPositiveLimitFailsNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.x.algorithm=gcra", "ratelimit.policies.x.limit=0",
				"ratelimit.policies.x.window=1s")
			.run(failsOnProperty("ratelimit.policies.x.limit"));
	}

	@Test
	void missingWindowFailsNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.x.algorithm=gcra", "ratelimit.policies.x.limit=5")
			.run(failsOnProperty("ratelimit.policies.x.window"));
	}

	@Test
	void unknownAlgorithmFailsNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.x.algorithm=leaky-bucket", "ratelimit.policies.x.limit=5",
				"ratelimit.policies.x.window=1s")
			.run(failsWith("Failed to bind properties under 'ratelimit.policies.x.algorithm'"));
	}

	private static ContextConsumer<AssertableWebApplicationContext> failsWith(String message) {
		return (context) -> assertThat(context).hasFailed().getFailure().hasStackTraceContaining(message);
	}

	private static ContextConsumer<AssertableWebApplicationContext> failsOnProperty(String property,
			String... reasons) {
		return (context) -> assertInvalidProperty(context.getStartupFailure(), property, reasons);
	}

	private static void assertLimited(Greeter greeter) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/greet");
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, new MockHttpServletResponse()));
		assertThat(greeter.greet("a")).isEqualTo("hello a");
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, new MockHttpServletResponse()));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.greet("b"));
	}

	@Configuration(proxyBeanMethods = false)
	static class RateLimitedBeanConfiguration {

		@Bean
		Greeter greeter() {
			return new Greeter();
		}

	}

	static class Greeter {

		@RateLimited("api")
		public String greet(String name) {
			return "hello " + name;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RecordingPostProcessor {

		static final Set<String> seen = new CopyOnWriteArraySet<>();

		@Bean
		static BeanPostProcessor recordingPostProcessor() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					seen.add(beanName);
					return bean;
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		FilterRegistrationBean<RateLimitFilter> myFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
			return new FilterRegistrationBean<>(new RateLimitFilter(enforcer, responses));
		}

		@Bean
		RateLimitExceptionResolver myResolver(RateLimitResponses responses) {
			return new RateLimitExceptionResolver(responses, 1);
		}

		@Bean
		static RateLimitedMethodPostProcessor myPostProcessor() {
			RateLimitEnforcer enforcer = new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
					new RateLimitPolicyRegistry(List.of()), List.of(), (name) -> null, FailureMode.OPEN);
			return new RateLimitedMethodPostProcessor(() -> enforcer, MethodInvocation::proceed) {
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFilterBean {

		@Bean
		RateLimitFilter myRateLimitFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
			return new RateLimitFilter(enforcer, responses);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnknownPolicyConfiguration {

		@Bean
		UnknownPolicy unknownPolicy() {
			return new UnknownPolicy();
		}

	}

	static class UnknownPolicy {

		@RateLimited("nope")
		public void call() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InvalidInlinePolicyConfiguration {

		@Bean
		InvalidInlinePolicy invalidInlinePolicy() {
			return new InvalidInlinePolicy();
		}

	}

	static class InvalidInlinePolicy {

		@RateLimited(name = "inline", algorithm = Algorithm.GCRA, limit = -1, window = "1s")
		public void call() {
		}

	}

}
