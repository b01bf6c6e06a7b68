package io.github.ratelimit.sample;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.test.EmbeddedRedis;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on a real {@code redis-server} started by {@link EmbeddedRedis}: no Docker, nothing installed.
 */
@EmbeddedRedis
class SampleApplicationTests extends SampleContractTests {

	@Autowired
	RateLimitBackend backend;

	@Test
	void theLimitsAreKeptInTheEmbeddedRedis(RedisServer redis) {
		assertThat(this.backend.kind()).isEqualTo("redis");
		this.client.get().uri("/hello").exchange().expectStatus().isOk();
		assertThat(redis.commands().keys("rl:{ip:127.0.0.1}:per-client:*")).hasSize(1);
	}

}
