package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void usesTheApplicationsRedisConnectionAndSharesCountsThroughIt() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		this.runner
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=2",
					"ratelimit.policies.api.window=1m")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimiter.class);
				assertThat(context.getBean(RateLimitBackend.class)).isInstanceOf(RedisRateLimitBackend.class);
				RateLimitPolicies policies = context.getBean(RateLimitPolicies.class);
				assertThat(policies.get("api").algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
				assertThat(policies.get("api").window()).isEqualTo(Duration.ofMinutes(1));
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitRequest request = RateLimitRequest.of(policies.get("api"), "client");
				assertThat(limiter.check(request).allowed()).isTrue();
				assertThat(limiter.check(request).allowed()).isTrue();
				assertThat(limiter.check(request).allowed()).isFalse();
				assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{client}:api:fw");
			});
	}

	@Test
	void fallsBackToTheLocalBackendWithoutRedis() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context.getBean(RateLimitBackend.class))
				.isInstanceOf(LocalRateLimitBackend.class));
	}

	@Test
	void backsOffWhenTheUserDefinesBeans() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context.getBean(RateLimitBackend.class)).isSameAs(context.getBean(UserBeans.class).backend);
			assertThat(context).hasSingleBean(RateLimiter.class);
		});
	}

	@Test
	void isOffWhenDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimiter.class)
				.doesNotHaveBean(RateLimitBackend.class));
	}

	@Test
	void invalidPoliciesFailAtStartupNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=0",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("limit must be between 1"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=0",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Invalid property 'ratelimit.policies.bad.limit'"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=leaky-bucket", "ratelimit.policies.bad.limit=5",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Invalid property 'ratelimit.policies.bad.algorithm'")
				.hasStackTraceContaining("leaky-bucket"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=5")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Invalid property 'ratelimit.policies.bad.window'"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		final RateLimitBackend backend = new LocalRateLimitBackend();

		@Bean
		RateLimitBackend myBackend() {
			return this.backend;
		}

	}

}
