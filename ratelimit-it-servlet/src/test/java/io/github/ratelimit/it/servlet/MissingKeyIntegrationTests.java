package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests without the API key header ({@code key: header:X-Api-Key}) under each {@code missing-key} behaviour
 * (GCRA, 2 per hour per key).
 */
class MissingKeyIntegrationTests extends IntegrationTestSupport {

	@Test
	void sharedCountsAllRequestsWithoutAKeyAsOneAnonymousClient() {
		assertThat(this.http.status("/keys/shared")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared")).isEqualTo(429);
		assertThat(this.http.status("/keys/shared", "X-Api-Key", "key-1")).isEqualTo(200);
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{anonymous}:key-shared:gc",
				"rl:{header.x-api-key:key-1}:key-shared:gc");
	}

	@Test
	void skipLeavesRequestsWithoutAKeyUnlimited() {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> response = this.http.get("/keys/skip");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		}
		assertThat(this.http.status("/keys/skip", "X-Api-Key", "key-1")).isEqualTo(200);
		assertThat(this.http.status("/keys/skip", "X-Api-Key", "key-1")).isEqualTo(200);
		assertThat(this.http.status("/keys/skip", "X-Api-Key", "key-1")).isEqualTo(429);
	}

	@Test
	void denyRejectsRequestsWithoutAKey() {
		HttpResponse<String> denied = this.http.get("/keys/deny");
		// a client error, not a quota: waiting never makes this request succeed
		assertThat(denied.statusCode()).isEqualTo(400);
		assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(denied.headers().firstValue("RateLimit")).isEmpty();
		assertThat(denied.headers().firstValue("X-RateLimit-Remaining")).isEmpty();
		assertThat(denied.headers().firstValue("Retry-After")).isEmpty();
		assertThat(denied.body()).contains("\"status\":400").contains("header.x-api-key").contains("'key-deny'");
		assertThat(this.http.status("/keys/deny", "X-Api-Key", "key-1")).isEqualTo(200);
		assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{header.x-api-key:key-1}:key-deny:gc");
	}

}
