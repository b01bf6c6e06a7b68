package io.github.ratelimit.it.webflux;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimited} on WebFlux handlers and services returning {@code Mono} and {@code Flux}, alone and with filter
 * rules, over real HTTP against real Redis.
 */
class RateLimitedHandlerIntegrationTests extends WebfluxIntegrationTestSupport {

	@Test
	void monoHandlersAreLimitedPerKeyFromASpelExpressionOverAParameter() {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> admitted = get("/tenants/acme/mono", "any");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).isEqualTo("mono acme");
			assertThat(header(admitted, "RateLimit-Policy")).isEqualTo("\"tenant-mono\";q=2;w=3600");
			assertThat(header(admitted, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(1 - i));
		}
		HttpResponse<String> denied = get("/tenants/acme/mono", "someone-else");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(denied, "RateLimit")).isEqualTo("\"tenant-mono\";r=0;t=3600");
		assertThat(header(denied, "Retry-After")).isEqualTo("3600");
		assertThat(denied.body()).contains("\"instance\":\"/tenants/acme/mono\"")
			.contains("\"policies\":[{\"name\":\"tenant-mono\",\"limit\":2,\"remaining\":0,\"window\":3600");
		assertThat(get("/tenants/globex/mono", "any").statusCode()).as("another tenant").isEqualTo(200);
	}

	@Test
	void anApplicationsCatchAllExceptionHandlerDoesNotSwallowTheDenial() {
		assertThat(get("/catch-all/acme", "any").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/catch-all/acme", "any");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(denied, "Retry-After")).isNotEmpty();
		assertThat(header(denied, "RateLimit")).startsWith("\"catch-all\";r=0;t=");
		assertThat(denied.body()).contains("\"violated-policies\":[\"catch-all\"]").doesNotContain("handled");
	}

	@Test
	void fluxHandlersAreLimitedPerKeyToo() {
		HttpResponse<String> admitted = get("/tenants/acme/flux", "any");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(admitted.body()).isEqualTo("flux acme");
		assertThat(header(admitted, "RateLimit")).isEqualTo("\"tenant-flux\";r=0;t=3600");
		assertThat(get("/tenants/acme/flux", "any").statusCode()).isEqualTo(429);
		assertThat(get("/tenants/initech/flux", "any").statusCode()).isEqualTo(200);
	}

	@Test
	void aServiceIsCheckedWhenItsResultIsSubscribedToNotWhenItIsCalled() {
		// each request calls the service twice and subscribes once: two requests fit the limit of 2
		assertThat(get("/tenants/acme/assembled-twice", "any").body()).isEqualTo("greetings acme (true)");
		assertThat(get("/tenants/acme/assembled-twice", "any").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get("/tenants/acme/assembled-twice", "any");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "RateLimit")).isEqualTo("\"tenant-greeting\";r=0;t=3600");
	}

	@Test
	void filterRulesAndAnnotationsShareTheHeadersAndAnAnnotationDenialTakesNoRuleQuota() {
		HttpResponse<String> admitted = get("/combined/acme", "combined");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(header(admitted, "RateLimit-Policy"))
			.isEqualTo("\"combined-rule\";q=10;w=3600, \"combined-annotation\";q=1;w=3600");
		assertThat(header(admitted, "RateLimit"))
			.isEqualTo("\"combined-rule\";r=9;t=3600, \"combined-annotation\";r=0;t=3600");
		assertThat(header(admitted, "X-RateLimit-Limit")).isEqualTo("1");
		HttpResponse<String> denied = get("/combined/acme", "combined");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "RateLimit-Policy"))
			.isEqualTo("\"combined-rule\";q=10;w=3600, \"combined-annotation\";q=1;w=3600");
		// the rule's quota this request took is given back, and the 429 says so: 9 left, not 8
		assertThat(header(denied, "RateLimit")).startsWith("\"combined-rule\";r=9;t=3600, \"combined-annotation\";r=0;t=");
		assertThat(header(denied, "Retry-After")).isEqualTo("3600");
		assertThat(denied.body()).contains("\"policies\":[{\"name\":\"combined-annotation\"");
		HttpResponse<String> ruleOnly = get("/combined/plain", "combined");
		assertThat(ruleOnly.statusCode()).isEqualTo(200);
		assertThat(header(ruleOnly, "RateLimit")).as("the denied request gave its rule quota back")
			.isEqualTo("\"combined-rule\";r=8;t=3600");
	}

}
