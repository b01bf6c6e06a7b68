package io.github.ratelimit.sample;

import io.github.ratelimit.test.EmbeddedRedis;
import io.github.ratelimit.test.RateLimitTester;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample through MockMvc: requests that never open a socket are limited like real ones, on the same Redis.
 */
@SpringBootTest
@AutoConfigureMockMvc
@EmbeddedRedis
class SampleMockMvcTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll();
	}

	@Test
	void aFreeKeyIsRefusedAfterTenQuotesAndServedAgainAfterAReset() {
		for (int i = 0; i < 10; i++) {
			assertThat(this.mvc.get().uri("/api/quote").header("X-Api-Key", "free-key-1")).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/api/quote").header("X-Api-Key", "free-key-1"))
			.hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.bodyJson()
			.extractingPath("$.detail")
			.asString()
			.contains("per-api-key");
		assertThat(this.mvc.get().uri("/api/quote").header("X-Api-Key", "pro-key-1")).hasStatusOk()
			.headers()
			.hasValue("X-RateLimit-Remaining", "99");
		this.rateLimits.reset("per-api-key");
		assertThat(this.rateLimits.remaining("per-api-key", "free-key-1")).isEqualTo(10);
		assertThat(this.mvc.get().uri("/api/quote").header("X-Api-Key", "free-key-1")).hasStatusOk();
	}

	@Test
	void theEnterpriseOverrideIsReadInTheState() {
		assertThat(this.rateLimits.state("per-api-key", "enterprise-key-1").limit()).isEqualTo(10_000);
		assertThat(this.mvc.get().uri("/api/quote").header("X-Api-Key", "enterprise-key-1")).hasStatusOk()
			.headers()
			.hasValue("X-RateLimit-Limit", "10000");
		assertThat(this.rateLimits.state("per-api-key", "free-key-1").limit()).isEqualTo(10);
	}

	@Test
	void theRateLimitsEndpointIsExposed() {
		assertThat(this.mvc.get().uri("/actuator/ratelimits")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.policies.per-api-key.tiers.pro.limit")
			.asNumber()
			.isEqualTo(100);
	}

}
