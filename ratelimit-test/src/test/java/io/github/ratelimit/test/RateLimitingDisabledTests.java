package io.github.ratelimit.test;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ApplicationContext;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.enabled=false} for a test slice (load tests, tests of something else): nothing is limited, and
 * there is no limiter to reset.
 */
@SpringBootTest(properties = "ratelimit.enabled=false")
@AutoConfigureMockMvc
@EmbeddedRedis
class RateLimitingDisabledTests {

	@Autowired
	MockMvcTester mvc;

	@Test
	void nothingIsLimited(ApplicationContext context) {
		for (int i = 0; i < 10; i++) {
			assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk().headers().doesNotContainHeader(
					"X-RateLimit-Limit");
			assertThat(this.mvc.get().uri("/names/bob")).hasStatusOk();
		}
		assertThat(context.getBeanNamesForType(RateLimitTester.class)).isEmpty();
	}

}
