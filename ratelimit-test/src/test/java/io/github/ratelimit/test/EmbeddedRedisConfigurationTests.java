package io.github.ratelimit.test;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The development-time run: {@code SpringApplication.from(main).with(EmbeddedRedisConfiguration.class)} starts a
 * Redis of its own, the application limits on it, and closing the application stops it.
 */
class EmbeddedRedisConfigurationTests {

	@Test
	void anApplicationRunsOnARedisOfItsOwnThatStopsWithIt() {
		ConfigurableApplicationContext context = SpringApplication.from(TestApplication::main)
			.with(EmbeddedRedisConfiguration.class)
			.run("--server.port=0")
			.getApplicationContext();
		RedisServer redis = context.getBean(RedisServer.class);
		try {
			DataRedisConnectionDetails details = context.getBean(DataRedisConnectionDetails.class);
			assertThat(details.getStandalone().getPort()).isEqualTo(redis.port());
			assertThat(context.getBean(RateLimitBackend.class).kind()).isEqualTo("redis");
			assertThat(context.getBean(RateLimitTester.class).state("per-client", "10.0.0.1").limit()).isEqualTo(3);
			assertThat(redis.isRunning()).isTrue();
		}
		finally {
			context.close();
		}
		assertThat(redis.isRunning()).isFalse();
	}

}
