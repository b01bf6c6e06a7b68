package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The headers and the 429 of a filter rule ({@code /api/**}: policy {@code per-client}, GCRA, 5 per minute per
 * client address), over real HTTP and real Redis.
 */
class RateLimitHeadersIntegrationTests extends IntegrationTestSupport {

	private static final Pattern RATELIMIT = Pattern.compile("\"per-client\";r=(\\d+);t=(\\d+)");

	@Autowired
	RateLimitBackend backend;

	@Test
	void countersLiveInRedis() {
		assertThat(this.backend).isInstanceOf(RedisRateLimitBackend.class);
		assertThat(this.http.status("/api/hello")).isEqualTo(200);
		assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{ip:127.0.0.1}:per-client:gc");
	}

	@Test
	void admittedResponseCarriesTheExactHeaders() {
		long before = System.currentTimeMillis();
		HttpResponse<String> response = this.http.get("/api/hello");
		long after = System.currentTimeMillis();
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("hello");
		assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo("4");
		// GCRA, 5 per 60 s: one request takes 12 s of the bucket, so it is full again 12 s from now.
		assertThat(Long.parseLong(header(response, "X-RateLimit-Reset"))).isBetween(ceilSeconds(before) + 12,
				ceilSeconds(after) + 12);
		assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"per-client\";q=5;w=60");
		assertThat(header(response, "RateLimit")).isEqualTo("\"per-client\";r=4;t=12");
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		for (int remaining = 3; remaining >= 0; remaining--) {
			HttpResponse<String> next = this.http.get("/api/hello");
			assertThat(next.statusCode()).isEqualTo(200);
			assertThat(header(next, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(remaining));
		}
	}

	@Test
	void deniedResponseIsAProblemWithRetryAfter() throws IOException {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.status("/api/hello")).isEqualTo(200);
		}
		HttpResponse<String> denied = this.http.get("/api/hello");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(denied, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"per-client\";q=5;w=60");
		Matcher ratelimit = RATELIMIT.matcher(header(denied, "RateLimit"));
		assertThat(ratelimit.matches()).as(header(denied, "RateLimit")).isTrue();
		assertThat(ratelimit.group(1)).isEqualTo("0");
		long retryAfter = Long.parseLong(header(denied, "Retry-After"));
		// The next emission is 12 s after the first request, less the little time the five requests took.
		assertThat(retryAfter).isBetween(1L, 12L);
		assertThat(ratelimit.group(2)).isEqualTo(Long.toString(retryAfter));
		JsonNode problem = JsonMapper.shared().readTree(denied.body());
		assertThat(problem.get("type").asString())
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
		assertThat(problem.get("title").asString())
			.isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
		assertThat(problem.get("violated-policies")).hasSize(1);
		assertThat(problem.get("violated-policies").get(0).asString())
			.isEqualTo(problem.get("policies").get(0).get("name").asString());
		assertThat(problem.get("status").asInt()).isEqualTo(429);
		assertThat(problem.get("detail").asString())
			.isEqualTo("Rate limit exceeded ('per-client'). Retry after " + retryAfter + " second"
					+ ((retryAfter == 1) ? "" : "s") + ".");
		assertThat(problem.get("instance").asString()).isEqualTo("/api/hello");
		assertThat(problem.get("retryAfter").asLong()).isEqualTo(retryAfter);
		assertThat(problem.get("policies")).hasSize(1);
		JsonNode policy = problem.get("policies").get(0);
		assertThat(policy.get("name").asString()).isEqualTo("per-client");
		assertThat(policy.get("limit").asLong()).isEqualTo(5);
		assertThat(policy.get("remaining").asLong()).isEqualTo(0);
		assertThat(policy.get("window").asLong()).isEqualTo(60);
		assertThat(policy.get("retryAfter").asLong()).isEqualTo(retryAfter);
	}

	@Test
	void requestIsAdmittedAgainAfterWaitingRetryAfter() throws InterruptedException {
		// Policy 'quick': GCRA, 1 per 2 s.
		assertThat(this.http.status("/quick")).isEqualTo(200);
		HttpResponse<String> denied = this.http.get("/quick");
		assertThat(denied.statusCode()).isEqualTo(429);
		long retryAfter = Long.parseLong(header(denied, "Retry-After"));
		assertThat(retryAfter).isBetween(1L, 2L);
		Thread.sleep(retryAfter * 1000);
		assertThat(this.http.status("/quick")).isEqualTo(200);
		assertThat(this.http.status("/quick")).isEqualTo(429);
	}

	@Test
	void spoofedForwardedForDoesNotResetTheClientsQuota() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.status("/api/hello", "X-Forwarded-For", "198.51.100." + i, "Forwarded",
					"for=198.51.100." + i, "X-Real-IP", "198.51.100." + i))
				.isEqualTo(200);
		}
		for (int i = 5; i < 10; i++) {
			assertThat(this.http.status("/api/hello", "X-Forwarded-For", "198.51.100." + i, "Forwarded",
					"for=198.51.100." + i, "X-Real-IP", "198.51.100." + i))
				.isEqualTo(429);
		}
		assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{ip:127.0.0.1}:per-client:gc");
	}

	@Test
	void pathsWithoutRulesCarryNoHeaders() {
		HttpResponse<String> response = this.http.get("/open");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
	}

	@Test
	void capturesTheWireFormatOfAnAdmittedAndADeniedResponse() throws IOException {
		String admitted = this.http.raw("/api/hello");
		for (int i = 0; i < 4; i++) {
			this.http.status("/api/hello");
		}
		String denied = this.http.raw("/api/hello");
		assertThat(admitted).startsWith("HTTP/1.1 200 ").contains("\r\nRateLimit: \"per-client\";r=4;t=12\r\n");
		assertThat(denied).startsWith("HTTP/1.1 429 ").contains("\r\nRetry-After: ");
		String captured = "----- admitted -----\n" + admitted.replace("\r\n", "\n") + "\n----- denied -----\n"
				+ denied.replace("\r\n", "\n") + "\n";
		Files.writeString(Path.of("target", "captured-responses.txt"), captured);
		System.out.println(captured);
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers()
			.firstValue(name)
			.orElseThrow(() -> new AssertionError("no header " + name + " in " + response.headers().map()));
	}

	private static long ceilSeconds(long millis) {
		return (millis + 999) / 1000;
	}

}
