package io.github.ratelimit.test;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.TestRestTemplate;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureTestRestTemplate;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tester with a server on a random port, through {@link RestTestClient} and {@link TestRestTemplate}: a 429
 * after the limit, a reset, a 200 again.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureRestTestClient
@AutoConfigureTestRestTemplate
@EmbeddedRedis
class RandomPortRateLimitTesterTests {

	@Autowired
	RestTestClient client;

	@Autowired
	TestRestTemplate restTemplate;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll();
	}

	@Test
	void restTestClientSeesTheLimitAndTheReset() {
		for (int i = 0; i < 3; i++) {
			this.client.get().uri("/api/hello").exchange().expectStatus().isOk();
		}
		this.client.get()
			.uri("/api/hello")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.exists("Retry-After");
		this.rateLimits.reset("per-client");
		this.client.get().uri("/api/hello").exchange().expectStatus().isOk().expectHeader().valueEquals(
				"X-RateLimit-Remaining", "2");
	}

	@Test
	void testRestTemplateSeesTheLimitAndTheReset() {
		for (int i = 0; i < 2; i++) {
			assertThat(this.restTemplate.getForEntity("/names/ann", String.class).getStatusCode())
				.isEqualTo(HttpStatus.OK);
		}
		assertThat(this.restTemplate.getForEntity("/names/ann", String.class).getStatusCode())
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(this.rateLimits.state("per-name", "ann").allowed()).isFalse();
		this.rateLimits.reset("per-name", "ann");
		assertThat(this.restTemplate.getForEntity("/names/ann", String.class).getBody()).isEqualTo("hello ann");
	}

}
