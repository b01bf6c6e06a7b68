package io.github.ratelimit.test;

import io.github.ratelimit.core.RateLimitBackend;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tester on the local backend, as in an application without Redis.
 */
@SpringBootTest(properties = "spring.autoconfigure.exclude="
		+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@AutoConfigureMockMvc
class LocalRateLimitTesterTests extends RateLimitTesterContractTests {

	@Autowired
	RateLimitBackend backend;

	@Test
	void theLimitsLiveInMemory() {
		assertThat(this.backend.kind()).isEqualTo("local");
	}

}
