package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.autoconfigure.reactive.RateLimitReactiveAutoConfiguration;
import io.github.ratelimit.autoconfigure.servlet.RateLimitServletAutoConfiguration;
import io.github.ratelimit.spring.BeanRateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.servlet.ServletRateLimitedMethodPostProcessor;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.RestController;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitMethodAutoConfigurationTests {

	private static final AutoConfigurations ALL = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitServletAutoConfiguration.class, RateLimitReactiveAutoConfiguration.class,
			RateLimitMethodAutoConfiguration.class);

	// "jobs" is a sliding window log: a fixed window's boundary (each whole hour) between two calls would refill it
	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(ALL)
		.withPropertyValues("ratelimit.policies.jobs.algorithm=sliding-window-log", "ratelimit.policies.jobs.limit=1",
				"ratelimit.policies.jobs.window=1h", "ratelimit.policies.jobs.key=global");

	@Test
	void aNonWebApplicationGetsTheBeanPostProcessorAndItsBeansAreLimited() {
		this.runner.withUserConfiguration(Jobs.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitedMethodPostProcessor.class)
				.hasSingleBean(BeanRateLimitedMethodPostProcessor.class);
			Job job = context.getBean(Job.class);
			assertThat(job.run()).isEqualTo("ran");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(job::run);
		});
	}

	@Test
	void aWebApplicationGetsOnlyItsOwnPostProcessorSoNoCallIsCheckedTwice() {
		new WebApplicationContextRunner().withConfiguration(ALL)
			.withPropertyValues("ratelimit.policies.jobs.algorithm=sliding-window-log",
					"ratelimit.policies.jobs.limit=1", "ratelimit.policies.jobs.window=1h",
					"ratelimit.policies.jobs.key=global")
			.withUserConfiguration(Jobs.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitedMethodPostProcessor.class)
					.hasSingleBean(ServletRateLimitedMethodPostProcessor.class);
				Job job = context.getBean(Job.class);
				assertThat(job.run()).isEqualTo("ran");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(job::run);
			});
	}

	@Test
	void aNegativeMaxWaitFailsAtStartupNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.jobs.max-wait=-1s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.jobs.max-wait",
					"must not be negative"));
	}

	@Test
	void anInvalidMaxWaitOnTheAnnotationFailsAtStartupNamingTheMethod() {
		this.runner.withUserConfiguration(BadWaits.class)
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("IllegalStateException: @RateLimited on " + BadWait.class.getName()
						+ ".run() has an invalid maxWait 'soon'"));
	}

	@Test
	void maxWaitOnAControllerFailsAtStartup() {
		this.runner.withUserConfiguration(WaitingControllers.class)
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining(WaitingController.class.getName() + ".run()")
				.hasMessageContaining("a controller's denials are answered with 429 at once"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Jobs {

		@Bean
		Job job() {
			return new Job();
		}

	}

	static class Job {

		@RateLimited("jobs")
		public String run() {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadWaits {

		@Bean
		BadWait badWait() {
			return new BadWait();
		}

	}

	static class BadWait {

		@RateLimited(value = "jobs", maxWait = "soon")
		public String run() {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WaitingControllers {

		@Bean
		WaitingController waitingController() {
			return new WaitingController();
		}

	}

	@RestController
	static class WaitingController {

		@RateLimited(value = "jobs", maxWait = "1s")
		public String run() {
			return "ran";
		}

	}

}
