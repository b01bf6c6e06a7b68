package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code ratelimit.filter.enabled=false} the rules do not apply, while {@code @RateLimited} methods still do,
 * and their concurrency permits are still released when the response completes (by the handler interceptor that
 * stands in for the filter).
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "ratelimit.filter.enabled=false")
class FilterDisabledIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	@LocalServerPort
	int port;

	@Autowired
	Gate gate;

	private Http http;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		this.http = new Http(this.port);
	}

	@AfterEach
	void openGate() {
		this.gate.open();
	}

	@Test
	void rulesDoNotApply() {
		for (int i = 0; i < 7; i++) {
			HttpResponse<String> response = this.http.get("/api/hello");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		}
	}

	@Test
	void rateLimitedMethodsStillApply() {
		assertThat(this.http.status("/orders/1")).isEqualTo(200);
		assertThat(this.http.status("/orders/1")).isEqualTo(200);
		HttpResponse<String> denied = this.http.get("/orders/1");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-order\";q=2;w=3600");
	}

	@Test
	void permitsOfMethodsAreReleasedWithoutTheFilter() throws Exception {
		for (String path : new String[] { "/inflight/sync", "/inflight/fail", "/inflight/deferred",
				"/inflight/sse" }) {
			this.gate.arm();
			CompletableFuture<HttpResponse<String>> inFlight = this.http.getAsync(path);
			this.gate.awaitEntered();
			assertThat(this.http.status("/inflight/sync")).as("while %s is in flight", path).isEqualTo(429);
			this.gate.open();
			assertThat(inFlight.get(30, TimeUnit.SECONDS).statusCode()).as(path).isIn(200, 500);
			Permits.awaitAdmitted(this.http, "/inflight/sync");
		}
	}

}
