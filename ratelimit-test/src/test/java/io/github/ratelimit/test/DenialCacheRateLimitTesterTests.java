package io.github.ratelimit.test;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimiter;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tester's contract with the local denial cache on: every reset it makes is announced, so the identities it
 * resets are not denied from the cache afterwards (each contract test exhausts a quota, which the cache then holds,
 * resets it and expects to be admitted).
 */
@SpringBootTest(properties = "ratelimit.redis.denial-cache.enabled=true")
@AutoConfigureMockMvc
@EmbeddedRedis
class DenialCacheRateLimitTesterTests extends RateLimitTesterContractTests {

	@Autowired
	RateLimiter limiter;

	@Test
	void aDenialHeldByTheCacheIsForgottenByAReset() {
		RateLimitDenialCache cache = ((DefaultRateLimiter) this.limiter).denialCache();
		assertThat(cache).isNotNull();
		for (int i = 0; i < 3; i++) {
			assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/api/hello")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		long hits = cache.hitCount();
		assertThat(this.mvc.get().uri("/api/hello")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.containsHeader("Retry-After")
			.hasValue("X-RateLimit-Remaining", "0");
		assertThat(cache.hitCount()).as("the second 429 came from the cache").isEqualTo(hits + 1);
		this.rateLimits.reset("per-client", "127.0.0.1");
		assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk();
	}

}
