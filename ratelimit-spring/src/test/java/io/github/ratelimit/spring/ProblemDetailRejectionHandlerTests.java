package io.github.ratelimit.spring;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class ProblemDetailRejectionHandlerTests {

	@Test
	void writesAnRfc9457ProblemWithTheViolatedPolicies() {
		RateLimitPolicy policy = RateLimitPolicy.builder("per-key")
			.algorithm(Algorithm.GCRA)
			.limit(5)
			.window(Duration.ofSeconds(10))
			.build();
		RateLimitDecision decision = new RateLimitDecision(
				List.of(new PolicyDecision(policy, "k", false, 0, Duration.ofSeconds(10), Duration.ofMillis(1200))),
				Permit.NONE);
		HttpHeaders rateLimitHeaders = RateLimitHeaders.ALL.of(decision, 0);
		Rejection rejection = new ProblemDetailRejectionHandler().reject(decision,
				TestRequest.get("/api/\"quoted\"\n"), rateLimitHeaders);
		assertThat(new String(rejection.body(), StandardCharsets.UTF_8)).isEqualTo(
				"{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
						+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
						+ "\"detail\":\"Rate limit exceeded ('per-key'). Retry after 2 seconds.\","
						+ "\"instance\":\"/api/\\\"quoted\\\"\\n\",\"violated-policies\":[\"per-key\"],"
						+ "\"policies\":[{\"name\":\"per-key\",\"limit\":5,\"remaining\":0,\"window\":10,\"retryAfter\":2}],"
						+ "\"retryAfter\":2}");
		rejection = new ProblemDetailRejectionHandler("about:blank").reject(decision,
				TestRequest.get("/api/\"quoted\"\n"), rateLimitHeaders);
		assertThat(rejection.status()).isEqualTo(429);
		assertThat(rejection.headers().getFirst("Content-Type")).isEqualTo("application/problem+json");
		assertThat(rejection.headers().getFirst("Retry-After")).isEqualTo("2");
		assertThat(new String(rejection.body(), StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"about:blank\","
				+ "\"title\":\"Too Many Requests\",\"status\":429,"
				+ "\"detail\":\"Rate limit exceeded ('per-key'). Retry after 2 seconds.\","
				+ "\"instance\":\"/api/\\\"quoted\\\"\\n\",\"violated-policies\":[\"per-key\"],"
				+ "\"policies\":[{\"name\":\"per-key\",\"limit\":5,\"remaining\":0,\"window\":10,\"retryAfter\":2}],"
				+ "\"retryAfter\":2}");
	}

	@Test
	void theApplicationsMapperKeepsTheMembersNamesAndOrder() {
		RateLimitPolicy policy = RateLimitPolicy.builder("per-key").algorithm(Algorithm.GCRA).limit(5)
			.window(Duration.ofSeconds(10)).build();
		RateLimitDecision decision = new RateLimitDecision(
				List.of(new PolicyDecision(policy, "k", false, 0, Duration.ofSeconds(10), Duration.ofMillis(1200))),
				Permit.NONE);
		HttpHeaders rateLimitHeaders = RateLimitHeaders.ALL.of(decision, 0);
		JsonMapper snakeCase = JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
		Rejection rejection = new ProblemDetailRejectionHandler(
				URI.create(ProblemDetailRejectionHandler.QUOTA_EXCEEDED), snakeCase)
			.reject(decision, TestRequest.get("/api/x"), rateLimitHeaders);
		Rejection plain = new ProblemDetailRejectionHandler().reject(decision, TestRequest.get("/api/x"),
				rateLimitHeaders);
		assertThat(new String(rejection.body(), StandardCharsets.UTF_8))
			.isEqualTo(new String(plain.body(), StandardCharsets.UTF_8))
			.contains("\"retryAfter\":2}]");
	}

	@Test
	void aRequestWithoutItsKeyUnderMissingKeyDenyIsAClientErrorWithNothingToWaitFor() {
		RateLimitPolicy policy = RateLimitPolicy.builder("per-user").algorithm(Algorithm.GCRA).limit(5)
			.window(Duration.ofMinutes(1)).build();
		for (String key : new String[] { "principal", "header:X-Api-Key" }) {
			KeySpec spec = KeySpec.parse(key, (name) -> null);
			RateLimitDecision decision = new RateLimitDecision(List.of(PolicyDecision
				.of(new RateLimitRequest.Entry(policy, MissingKey.denied(spec), 1), false, 0, 0, 0)), Permit.NONE);
			HttpHeaders rateLimitHeaders = RateLimitHeaders.ALL.of(decision, 0);
			assertThat(rateLimitHeaders.isEmpty()).isTrue();
			Rejection rejection = new ProblemDetailRejectionHandler().reject(decision, TestRequest.get("/me"),
					rateLimitHeaders);
			String body = new String(rejection.body(), StandardCharsets.UTF_8);
			assertThat(rejection.headers().getFirst("Retry-After")).isNull();
			if (key.equals("principal")) {
				assertThat(rejection.status()).as("the key is a credential").isEqualTo(401);
				assertThat(body).contains("Authentication is required ('per-user')");
			}
			else {
				assertThat(rejection.status()).isEqualTo(400);
				assertThat(body).contains("no rate-limit key (header.x-api-key)").contains("'per-user' requires");
			}
		}
	}

	@Test
	void aRefusalByAClosedPolicyIsA503WithTheTemporaryReducedCapacityTypeAndNoMadeUpFigures() {
		RateLimitPolicy closed = RateLimitPolicy.builder("strict")
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.failureMode(FailureMode.CLOSED)
			.build();
		RateLimitPolicy open = RateLimitPolicy.builder("lenient").algorithm(Algorithm.GCRA).limit(5)
			.window(Duration.ofMinutes(1)).build();
		RateLimitDecision decision = new RateLimitDecision(List.of(
				PolicyDecision.failedClosed(new RateLimitRequest.Entry(closed, "k", 1), Duration.ofSeconds(1)),
				PolicyDecision.failedOpen(new RateLimitRequest.Entry(open, "k", 1))), Permit.NONE);
		HttpHeaders rateLimitHeaders = RateLimitHeaders.ALL.of(decision, 0);
		assertThat(rateLimitHeaders.headerNames()).containsExactly("Retry-After");
		Rejection rejection = new ProblemDetailRejectionHandler().reject(decision, TestRequest.get("/api/x"),
				rateLimitHeaders);
		assertThat(rejection.status()).isEqualTo(503);
		assertThat(rejection.headers().getFirst("Retry-After")).isEqualTo("1");
		assertThat(rejection.headers().getFirst("RateLimit")).isNull();
		assertThat(new String(rejection.body(), StandardCharsets.UTF_8)).isEqualTo("{\"type\":"
				+ "\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\","
				+ "\"title\":\"Temporarily Reduced Capacity\",\"status\":503,"
				+ "\"detail\":\"Rate limits cannot be checked right now ('strict'). Retry after 1 second.\","
				+ "\"instance\":\"/api/x\",\"policies\":[{\"name\":\"strict\",\"retryAfter\":1}],"
				+ "\"retryAfter\":1}");
	}

}
