package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.RedisVersion;
import io.lettuce.core.FlushMode;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * {@code ratelimit.redis.script-mode} as the starter wires it, on a real Redis: EVALSHA by default; functions loaded
 * at startup on Redis 7; the start refused, naming the property, on a Redis without functions.
 */
class ScriptModeAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.algorithm=token-bucket", "ratelimit.policies.api.limit=2",
				"ratelimit.policies.api.window=1h", "ratelimit.redis.timeout=1s");

	private ApplicationContextRunner onRedis(RedisServer redis) {
		redis.flushAll();
		return this.runner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port());
	}

	@Test
	void evalshaByDefault() {
		onRedis(RedisServers.standalone()).run((context) -> assertThat(
				context.getBean(RedisRateLimitBackend.class).getScriptMode())
			.isEqualTo(ScriptMode.EVALSHA));
	}

	@Test
	void functionsAreLoadedAtStartupAndDecide() {
		RedisServer redis = RedisServers.standalone();
		assumeThat(hasFunctions(redis)).as("Redis functions need Redis 7 or later").isTrue();
		redis.commands().functionFlush(FlushMode.SYNC);
		onRedis(redis).withPropertyValues("ratelimit.redis.script-mode=functions").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RedisRateLimitBackend.class).getScriptMode()).isEqualTo(ScriptMode.FUNCTIONS);
			// the warm-up ran every algorithm's script as a function
			assertThat(redis.commands().functionList("ratelimit_*")).isNotEmpty();
			RateLimitPolicy policy = RateLimitPolicy.builder("api")
				.algorithm(Algorithm.TOKEN_BUCKET)
				.limit(2)
				.window(Duration.ofHours(1))
				.build();
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitDecision first = limiter.check(RateLimitRequest.builder().add(policy, "k", 1).build());
			limiter.check(RateLimitRequest.builder().add(policy, "k", 1).build());
			RateLimitDecision third = limiter.check(RateLimitRequest.builder().add(policy, "k", 1).build());
			assertThat(first.allowed()).isTrue();
			assertThat(third.allowed()).isFalse();
		});
	}

	@Test
	void functionsOnARedisWithoutThemFailTheStartNamingTheProperty() {
		RedisServer redis = RedisServers.standalone();
		assumeThat(hasFunctions(redis)).as("this Redis has functions (the check runs on Redis 6.2)").isFalse();
		onRedis(redis).withPropertyValues("ratelimit.redis.script-mode=functions").run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof InvalidConfigurationPropertyValueException) && failure.getCause() != null) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("ratelimit.redis.script-mode")
				.hasMessageContaining("Redis 7");
		});
	}

	private static boolean hasFunctions(RedisServer server) {
		RedisVersion version = RedisVersion.parse(server.commands().info("server").replace("redis_version:", "v="));
		return version != null && version.isAtLeast(7, 0);
	}

}
