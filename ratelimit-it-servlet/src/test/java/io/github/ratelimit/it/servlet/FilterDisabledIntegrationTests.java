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
			awaitAdmitted("/inflight/sync");
		}
	}

	private void awaitAdmitted(String probe) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		int status;
		while ((status = this.http.status(probe)) != 200 && System.nanoTime() < deadline) {
			assertThat(status).isEqualTo(429);
			Thread.sleep(20);
		}
		assertThat(status).as("%s admitted after the previous request completed", probe).isEqualTo(200);
		// the probe's own permit is released just after its response reaches us: wait until none is held, so the
		// next request of the test is not refused by it
		while (permitsHeld() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(permitsHeld()).as("permits held after %s completed", probe).isZero();
	}

	private static long permitsHeld() {
		long held = 0;
		for (String key : RedisServers.standalone().commands().keys("rl:*:cc")) {
			held += RedisServers.standalone().commands().zcard(key);
		}
		return held;
	}

}
