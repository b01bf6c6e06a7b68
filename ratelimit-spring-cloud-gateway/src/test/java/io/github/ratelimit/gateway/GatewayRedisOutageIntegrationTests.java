package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway whose Redis freezes (SIGSTOP): its requests are decided by the policies' failure modes within the time
 * budget instead of waiting for the Redis client's own 30 s timeout, and enforcement resumes once Redis thaws.
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
			for (int i = 0; i < 5; i++) {
				// each request is answered within the client's 10 s timeout although Redis never answers
				HttpResponse<String> open = get(gateway, "/outage/open/a", "frozen-client");
				assertThat(open.statusCode()).isEqualTo(200);
				assertThat(header(open, "RateLimit")).as("a policy that failed open claims no quota").isNull();
				HttpResponse<String> closed = get(gateway, "/outage/closed/a", "frozen-client");
				assertThat(closed.statusCode()).isEqualTo(503);
				assertThat(header(closed, "Content-Type")).startsWith("application/problem+json");
				assertThat(closed.body()).contains("temporary-reduced-capacity");
				assertThat(header(closed, "Retry-After")).isNotNull();
			}
			assertThat(backend.hits() - hitsBefore).as("only the open route reached the backend").isEqualTo(5);
		}
		finally {
			redis.thaw();
		}
		assertThat(awaitEnforced()).as("enforced again once Redis is back").isEqualTo(200);
		assertThat(header(get(gateway, "/outage/closed/a", "frozen-client"), "RateLimit")).contains("outage-closed");
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
