package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit headers of an admitted request survive the application's error handling (policy {@code per-client}:
 * 5 per minute), and the error dispatch is not counted again.
 */
class ErrorDispatchIntegrationTests extends IntegrationTestSupport {

	@Test
	void headersSurviveAResponseStatusExceptionBootsErrorPageAndSendError() {
		String[][] cases = { { "/api/failing/conflict", "409" }, { "/api/failing/boom", "500" },
				{ "/api/failing/teapot", "418" } };
		for (int i = 0; i < cases.length; i++) {
			String[] failing = cases[i];
			long remaining = 4 - i;
			HttpResponse<String> response = this.http.get(failing[0]);
			assertThat(response.statusCode()).isEqualTo(Integer.parseInt(failing[1]));
			assertThat(response.headers().firstValue("X-RateLimit-Remaining")).as(failing[0])
				.hasValue(Long.toString(remaining));
			assertThat(response.headers().firstValue("RateLimit")).as(failing[0])
				.hasValueSatisfying((value) -> assertThat(value).startsWith("\"per-client\";r=" + remaining + ";"));
			assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"per-client\";q=5;w=60");
			assertThat(response.headers().allValues("X-RateLimit-Remaining")).as("set once").hasSize(1);
		}
		assertThat(this.http.get("/api/hello").headers().firstValue("X-RateLimit-Remaining")).as("counted once each")
			.hasValue("1");
	}

}
