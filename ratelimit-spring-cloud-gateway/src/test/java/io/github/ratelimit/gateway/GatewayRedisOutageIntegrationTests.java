package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.getAsync;
import static io.github.ratelimit.gateway.GatewayTestApplication.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway whose Redis freezes (SIGSTOP): its requests are decided by the policies' failure modes within the time
 * budget instead of waiting for the Redis client's own 30 s timeout, and enforcement resumes once Redis thaws. Every
 * request must be answered within the HTTP client's 10 s timeout: one that waited for Redis would not be.
 */
class GatewayRedisOutageIntegrationTests {

	private static RedisServer redis;

	private static Backend backend;

	private static ConfigurableApplicationContext gateway;

	@BeforeAll
	static void start() {
		redis = RedisServer.start();
		backend = Backend.start();
		gateway = GatewayTestApplication.start(backend, "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--spring.data.redis.timeout=30s",
				"--ratelimit.redis.timeout=200ms");
	}

	@AfterAll
	static void stop() {
		GatewayTestApplication.closeAll(gateway, backend, redis);
	}

	@Test
	void aFrozenRedisDoesNotStallTheGateway() {
		assertThat(get(gateway, "/outage/open/a", "frozen-client").statusCode()).isEqualTo(200);
		// a first call on a loaded machine may miss the 200 ms budget (and fail closed): wait until Redis decides
		assertThat(awaitEnforced()).as("enforced before the freeze").isEqualTo(200);
		int hitsBefore = backend.hits();
		redis.freeze();
		try {
			// requests in flight together when Redis stops answering, before the circuit opens: each call is given
			// up at the budget, none waits for another or for the connection
			List<CompletableFuture<HttpResponse<String>>> open = new ArrayList<>();
			List<CompletableFuture<HttpResponse<String>>> closed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				open.add(getAsync(gateway, "/outage/open/a", "frozen-client"));
				closed.add(getAsync(gateway, "/outage/closed/a", "frozen-client"));
			}
			for (CompletableFuture<HttpResponse<String>> response : open) {
				assertOpen(response.join());
			}
			for (CompletableFuture<HttpResponse<String>> response : closed) {
				assertClosed(response.join());
			}
			// one after another, the circuit opening on the way
			for (int i = 0; i < 5; i++) {
				assertOpen(get(gateway, "/outage/open/a", "frozen-client"));
				assertClosed(get(gateway, "/outage/closed/a", "frozen-client"));
			}
			assertThat(backend.hits() - hitsBefore).as("only the open route reached the backend").isEqualTo(4 + 5);
		}
		finally {
			redis.thaw();
		}
		assertThat(awaitEnforced()).as("enforced again once Redis is back").isEqualTo(200);
		assertThat(header(get(gateway, "/outage/closed/a", "frozen-client"), "RateLimit")).contains("outage-closed");
	}

	@Test
	void aPermitTakenBeforeAFreezeIsGivenBackWithoutStallingItsResponseAndReachesRedisOnceItThaws() {
		assertThat(awaitEnforced()).as("enforced before the freeze").isEqualTo(200);
		int hitsBefore = backend.hits();
		CompletableFuture<HttpResponse<String>> held = getAsync(gateway, "/slots/hold/a", "frozen-slot-client");
		HttpResponse<String> response;
		backend.awaitHits(hitsBefore + 1, held);
		redis.freeze();
		try {
			backend.release();
			// the response ends only once its permit's release has been answered, which Redis does not do now: the
			// budget bounds that wait
			response = held.join();
		}
		finally {
			redis.thaw();
		}
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(header(response, "RateLimit")).as("the permit came from Redis").contains("slots");
		assertThat(awaitEnforced()).as("enforced again once Redis is back").isEqualTo(200);
		// the release was still sent: Redis applies it when it thaws, so the client's next request gets the only
		// permit (it would be refused until the 5 min lease ends if the release had been dropped)
		HttpResponse<String> next = get(gateway, "/slots/next", "frozen-slot-client");
		assertThat(next.statusCode()).isEqualTo(200);
		assertThat(header(next, "RateLimit")).as("decided by Redis").contains("slots");
	}

	private static void assertOpen(HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(header(response, "RateLimit")).as("a policy that failed open claims no quota").isNull();
	}

	private static void assertClosed(HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(header(response, "Content-Type")).startsWith("application/problem+json");
		assertThat(response.body()).contains("temporary-reduced-capacity");
		assertThat(header(response, "Retry-After")).isNotNull();
	}

	/** Requests the fail-closed route until Redis decides it (200), at most 15 s; the last status. */
	private static int awaitEnforced() {
		long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
		int status;
		do {
			status = get(gateway, "/outage/closed/a", "frozen-client").statusCode();
		}
		while (status != 200 && System.nanoTime() < deadline && pause());
		return status;
	}

	private static boolean pause() {
		try {
			Thread.sleep(200);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
