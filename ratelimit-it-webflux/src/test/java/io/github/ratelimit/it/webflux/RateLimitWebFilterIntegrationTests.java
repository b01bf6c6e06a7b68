package io.github.ratelimit.it.webflux;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter rules of {@code application.yml} over real HTTP against real Redis.
 */
class RateLimitWebFilterIntegrationTests extends WebfluxIntegrationTestSupport {

	@Autowired
	RateLimitBackend backend;

	@Test
	void admittedAndDeniedResponsesCarryExactHeadersAndAProblemBody() throws Exception {
		assertThat(this.backend).isInstanceOf(RedisRateLimitBackend.class);
		long before = System.currentTimeMillis() / 1000;
		HttpResponse<String> first = get("/api/hello", "headers");
		long after = System.currentTimeMillis() / 1000;
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("hello");
		assertThat(header(first, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(first, "X-RateLimit-Remaining")).isEqualTo("4");
		assertThat(Long.parseLong(header(first, "X-RateLimit-Reset"))).isBetween(before + 2, after + 3);
		assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"per-client\";q=5;w=10");
		assertThat(header(first, "RateLimit")).isEqualTo("\"per-client\";r=4;t=2");
		assertThat(header(first, "Retry-After")).isNull();
		for (int i = 2; i <= 5; i++) {
			HttpResponse<String> admitted = get("/api/hello", "headers");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(header(admitted, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
		}
		HttpResponse<String> denied = get("/api/hello", "headers");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(denied, "Retry-After")).isEqualTo("2");
		assertThat(header(denied, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"per-client\";q=5;w=10");
		assertThat(header(denied, "RateLimit")).isEqualTo("\"per-client\";r=0;t=2");
		JsonNode problem = JsonMapper.builder().build().readTree(denied.body());
		assertThat(problem.get("type").asString())
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
		assertThat(problem.get("title").asString())
			.isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
		assertThat(problem.get("violated-policies")).hasSize(1);
		assertThat(problem.get("violated-policies").get(0).asString())
			.isEqualTo(problem.get("policies").get(0).get("name").asString());
		assertThat(problem.get("status").asInt()).isEqualTo(429);
		assertThat(problem.get("detail").asString()).isEqualTo("Rate limit exceeded ('per-client'). Retry after 2 seconds.");
		assertThat(problem.get("instance").asString()).isEqualTo("/api/hello");
		assertThat(problem.get("retryAfter").asInt()).isEqualTo(2);
		assertThat(problem.get("policies")).hasSize(1);
		JsonNode policy = problem.get("policies").get(0);
		assertThat(policy.get("name").asString()).isEqualTo("per-client");
		assertThat(policy.get("limit").asInt()).isEqualTo(5);
		assertThat(policy.get("remaining").asInt()).isEqualTo(0);
		assertThat(policy.get("window").asInt()).isEqualTo(10);
		assertThat(policy.get("retryAfter").asInt()).isEqualTo(2);
		System.out.println("Allowed response:\n" + describe(first) + "\nDenied response:\n" + describe(denied));
	}

	@Test
	void aClientIsAdmittedAgainAfterWaitingRetryAfter() throws Exception {
		assertThat(get("/short/hello", "patient").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/short/hello", "patient");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Retry-After")).isEqualTo("1");
		Thread.sleep(Long.parseLong(header(denied, "Retry-After")) * 1000);
		assertThat(get("/short/hello", "patient").statusCode()).isEqualTo(200);
	}

	@Test
	void aSpoofedForwardedForHeaderDoesNotResetTheQuota() {
		assertThat(get("/ip/hello", "a").statusCode()).isEqualTo(200);
		assertThat(get("/ip/hello", "b").statusCode()).isEqualTo(200);
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> spoofed = get(this.port, "/ip/hello", "c" + i, "X-Forwarded-For", "203.0.113." + i,
					"Forwarded", "for=198.51.100." + i, "X-Real-IP", "192.0.2." + i);
			assertThat(spoofed.statusCode()).isEqualTo(429);
			assertThat(header(spoofed, "RateLimit")).startsWith("\"per-ip\";r=0;");
		}
	}

	@Test
	void twoInstancesOnOneRedisEnforceOneLimitTogether() {
		try (ConfigurableApplicationContext second = new SpringApplicationBuilder(WebfluxTestApplication.class)
			.properties("server.port=0", "spring.data.redis.host=" + REDIS.host(),
					"spring.data.redis.port=" + REDIS.port())
			.run()) {
			int secondPort = second.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
			assertThat(secondPort).isNotEqualTo(this.port);
			List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				int target = (i % 2 == 0) ? this.port : secondPort;
				responses.add(CompletableFuture.supplyAsync(() -> get(target, "/shared/hello", "one-limit")));
			}
			Map<Integer, Integer> byStatus = new TreeMap<>();
			Map<Integer, Integer> admittedByInstance = new TreeMap<>();
			for (int i = 0; i < responses.size(); i++) {
				HttpResponse<String> response = responses.get(i).join();
				byStatus.merge(response.statusCode(), 1, Integer::sum);
				if (response.statusCode() == 200) {
					admittedByInstance.merge((i % 2 == 0) ? 1 : 2, 1, Integer::sum);
				}
			}
			assertThat(byStatus).containsExactly(Map.entry(200, 10), Map.entry(429, 20));
			System.out.println("Admitted per instance (limit 10 in all): " + admittedByInstance);
		}
	}

	private static String describe(HttpResponse<String> response) {
		StringBuilder text = new StringBuilder("HTTP/1.1 " + response.statusCode() + "\n");
		response.headers().map().forEach((name, values) -> values.forEach((value) -> text.append(name).append(": ")
			.append(value).append('\n')));
		return text.append('\n').append(response.body()).toString();
	}

}
