package io.github.ratelimit.test;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example test of docs/testing.md ("A complete test"), as a user writes it: {@code /api/orders}
 * limited to 5 per minute per client address by the policy {@code orders}.
 */
@SpringBootTest
@AutoConfigureMockMvc
@EmbeddedRedis
class ReadmeExampleTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll(); // the server is shared: start every test from fresh limits
	}

	@Test
	void theSixthOrderOfAMinuteIsRefusedUntilTheLimitIsReset() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.mvc.get().uri("/api/orders")).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/api/orders")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.containsHeader("Retry-After");
		assertThat(this.rateLimits.state("orders", "127.0.0.1").remaining()).isZero();

		this.rateLimits.reset("orders", "127.0.0.1");

		assertThat(this.mvc.get().uri("/api/orders")).hasStatusOk();
	}

}
