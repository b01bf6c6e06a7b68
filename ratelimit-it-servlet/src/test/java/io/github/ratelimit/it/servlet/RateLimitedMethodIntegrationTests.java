package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import io.github.ratelimit.spring.KeySpec;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimited} handler methods, alone and together with a filter rule.
 */
class RateLimitedMethodIntegrationTests extends IntegrationTestSupport {

	@Test
	void annotationAndRuleApplyTogetherAndTheMostRestrictiveDecides() {
		// /combo/** has the rule policy 'combo-rule' (token bucket, 10 per hour); /combo/limited adds
		// @RateLimited("combo-method") (GCRA, 2 per hour).
		HttpResponse<String> first = this.http.get("/combo/limited");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"combo-rule\";q=10;w=3600, \"combo-method\";q=2;w=3600");
		assertThat(header(first, "RateLimit")).isEqualTo("\"combo-rule\";r=9;t=360, \"combo-method\";r=1;t=1800");
		assertThat(header(first, "X-RateLimit-Limit")).isEqualTo("2");
		assertThat(header(first, "X-RateLimit-Remaining")).isEqualTo("1");
		HttpResponse<String> second = this.http.get("/combo/limited");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(header(second, "X-RateLimit-Limit")).isEqualTo("2");
		assertThat(header(second, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(second, "RateLimit")).startsWith("\"combo-rule\";r=8;t=");
		HttpResponse<String> denied = this.http.get("/combo/limited");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(denied, "X-RateLimit-Limit")).isEqualTo("2");
		assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"combo-rule\";q=10;w=3600, \"combo-method\";q=2;w=3600");
		assertThat(header(denied, "Retry-After")).isNotEmpty();
		// the rule's quota the denied request took is given back, and the 429 says so: 8 left, not 7
		assertThat(header(denied, "RateLimit")).startsWith("\"combo-rule\";r=8;");
		JsonNode problem = JsonMapper.shared().readTree(denied.body());
		assertThat(problem.get("policies")).hasSize(1);
		assertThat(problem.get("policies").get(0).get("name").asString()).isEqualTo("combo-method");
		assertThat(problem.get("instance").asString()).isEqualTo("/combo/limited");
		// The denied request took nothing of the rule's quota: 10 - 2 admitted - this one = 7.
		HttpResponse<String> free = this.http.get("/combo/free");
		assertThat(free.statusCode()).isEqualTo(200);
		assertThat(header(free, "RateLimit")).startsWith("\"combo-rule\";r=7;");
		assertThat(header(free, "X-RateLimit-Remaining")).isEqualTo("7");
	}

	@Test
	void keyExpressionOverAPathVariableCountsEachValueApart() {
		assertThat(this.http.status("/orders/1")).isEqualTo(200);
		assertThat(this.http.status("/orders/1")).isEqualTo(200);
		HttpResponse<String> denied = this.http.get("/orders/1");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"per-order\";q=2;w=3600");
		assertThat(this.http.status("/orders/2")).isEqualTo(200);
		KeySpec id = KeySpec.parse("#id", (name) -> null);
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{" + id.identity("1") + "}:per-order:gc",
				"rl:{" + id.identity("2") + "}:per-order:gc");
	}

	@Test
	void keyExpressionOverARequestParameter() {
		assertThat(this.http.status("/search?q=Redis")).isEqualTo(200);
		assertThat(this.http.status("/search?q=redis")).isEqualTo(429);
		assertThat(this.http.status("/search?q=lua")).isEqualTo(200);
		KeySpec q = KeySpec.parse("#q.toLowerCase()", (name) -> null);
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder(
				"rl:{" + q.identity("redis") + "}:per-query:gc", "rl:{" + q.identity("lua") + "}:per-query:gc");
	}

	@Test
	void catchAllExceptionHandlerDoesNotSwallowTheDenial() {
		// DemoController has an @ExceptionHandler(Exception.class) advice (CatchAllAdvice) ...
		assertThat(this.http.get("/boom").body()).isEqualTo("handled IllegalStateException");
		// ... yet a denial of one of its methods is still the 429 problem.
		this.http.status("/orders/7");
		this.http.status("/orders/7");
		HttpResponse<String> denied = this.http.get("/orders/7");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(denied.body()).contains("\"violated-policies\":[\"per-order\"]");
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers()
			.firstValue(name)
			.orElseThrow(() -> new AssertionError("no header " + name + " in " + response.headers().map()));
	}

}
