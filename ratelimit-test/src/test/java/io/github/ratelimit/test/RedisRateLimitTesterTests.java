package io.github.ratelimit.test;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tester on a standalone Redis given by {@link EmbeddedRedis}: the state lives in that server.
 */
@SpringBootTest
@AutoConfigureMockMvc
@EmbeddedRedis
class RedisRateLimitTesterTests extends RateLimitTesterContractTests {

	@Autowired
	RateLimitBackend backend;

	@Test
	void theLimitsLiveInTheEmbeddedServer(RedisServer redis) {
		assertThat(this.backend.kind()).isEqualTo("redis");
		assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk();
		assertThat(redis.commands().keys("rl:{ip:127.0.0.1}:per-client:*")).hasSize(1);
		this.rateLimits.resetAll();
		assertThat(redis.commands().keys("rl:{ip:127.0.0.1}:per-client:*")).isEmpty();
	}

	@Test
	void resetAllLeavesKeysOutsideTheLimiterAlone(RedisServer redis) {
		redis.commands().set("rl:not-a-limit", "kept");
		redis.commands().set("orders:42", "kept");
		try {
			this.rateLimits.resetAll();
			assertThat(redis.commands().get("rl:not-a-limit")).isEqualTo("kept");
			assertThat(redis.commands().get("orders:42")).isEqualTo("kept");
		}
		finally {
			redis.commands().del("rl:not-a-limit", "orders:42");
		}
	}

}
