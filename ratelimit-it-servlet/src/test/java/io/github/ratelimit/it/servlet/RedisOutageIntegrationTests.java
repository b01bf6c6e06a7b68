package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.ratelimit.testkit.HttpLoad;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the application on one Redis, under load, while Redis is killed, frozen ({@code SIGSTOP}) or
 * slowed beyond the limiter's time budget. One instance talks to Redis directly, the other through a loopback
 * proxy (which can add latency). Three policies of 5 per hour per {@code X-Client}, one per failure mode:
 * {@code /outage/open}, {@code /outage/closed}, {@code /outage/local}; {@code /open} is not limited.
 * <p>
 * The Redis client keeps Spring Boot's default command timeout (60 s): every bounded request shows the limiter's own
 * budget at work. The assertions are on outcomes and counts; how long requests take is measured by the benchmark.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedisOutageIntegrationTests {

	/** A request not answered within this is a hung request, and fails the test. */

	private static RedisServer redis;

	private static TcpProxy proxy;

	private static ConfigurableApplicationContext direct;

	private static ConfigurableApplicationContext proxied;

	private static Http first;

	private static Http second;

	@BeforeAll
	static void startInstances() {
		redis = RedisServer.start();
		proxy = TcpProxy.start(redis.address());
		direct = Outages.start(redis.port());
		proxied = Outages.start(proxy.port());
		first = Outages.http(direct);
		second = Outages.http(proxied);
	}

	@AfterAll
	static void stopInstances() {
		Outages.close(direct);
		Outages.close(proxied);
		if (proxy != null) {
			proxy.close();
		}
		if (redis != null) {
			redis.close();
		}
	}

	@BeforeEach
	void healthyRedis() {
		if (redis.isFrozen()) {
			redis.thaw();
		}
		if (!redis.isRunning()) {
			redis.restart();
		}
		proxy.latency(Duration.ZERO);
		Outages.awaitEnforced(first);
		Outages.awaitEnforced(second);
	}

	@AfterEach
	void thaw() {
		if (redis.isFrozen()) {
			redis.thaw();
		}
	}

	@Test
	void redisKilledUnderLoadFailsOpenClosedOrLocallyPerPolicyAndEnforcementResumesAfterRestart() {
		assertThat(Outages.admittedOnClosedPath(10, first, second)).isEqualTo(5);
		List<HttpLoad.Response> responses;
		long failedAt;
		try (HttpLoad load = Outages.load(Outages.port(direct), Outages.port(proxied))) {
			await(() -> load.responses().size() > 50);
			failedAt = System.nanoTime();
			redis.kill();
			await(() -> load.responses().stream().filter((r) -> r.sentAfter(failedAt)).count() > 300);
			assertDuringOutage();
			responses = load.stop();
		}
		Outages.assertOutcomes(responses, failedAt);
		redis.restart();
		Outages.awaitEnforced(first);
		Outages.awaitEnforced(second);
		assertThat(Outages.admittedOnClosedPath(10, first, second)).isEqualTo(5);
	}

	@Test
	void redisFrozenUnderLoadNeitherHangsRequestsNorExhaustsTheServletThreads() {
		List<HttpLoad.Response> responses;
		long failedAt;
		try (HttpLoad load = Outages.load(Outages.port(direct), Outages.port(proxied))) {
			await(() -> load.responses().size() > 50);
			failedAt = System.nanoTime();
			redis.freeze();
			await(() -> load.responses().stream().filter((r) -> r.sentAfter(failedAt)).count() > 300);
			assertDuringOutage();
			// more requests at once than Tomcat has threads (200), limited and not: every one is answered
			List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
			for (int i = 0; i < 240; i++) {
				Http http = (i % 2 == 0) ? first : second;
				String path = switch (i % 4) {
					case 0 -> "/outage/open";
					case 1 -> "/outage/closed";
					case 2 -> "/outage/local";
					default -> "/open";
				};
				burst.add(http.getAsync(path, "X-Client", "burst-" + i));
			}
			for (CompletableFuture<HttpResponse<String>> response : burst) {
				assertThat(response.orTimeout(Outages.HUNG.toSeconds() * 2, TimeUnit.SECONDS).join().statusCode())
					.isIn(200, 429, 503);
			}
			assertThat(first.status("/actuator/health/liveness")).isEqualTo(200);
			responses = load.stop();
		}
		finally {
			redis.thaw();
		}
		Outages.assertOutcomes(responses, failedAt);
		Outages.awaitEnforced(first);
		Outages.awaitEnforced(second);
		assertThat(Outages.admittedOnClosedPath(10, first, second)).isEqualTo(5);
	}

	@Test
	void redisSlowerThanTheBudgetIsDecidedByTheFailureModesUntilItIsFastAgain() {
		proxy.latency(Duration.ofMillis(300));
		String client = "slow-" + Outages.nextClient();
		// the proxied instance: Redis answers too late, the failure modes decide
		await(() -> second.status("/outage/closed", "X-Client", client) == 503);
		HttpResponse<String> open = second.get("/outage/open", "X-Client", client);
		assertThat(open.statusCode()).isEqualTo(200);
		assertThat(open.headers().firstValue("RateLimit")).isEmpty();
		// the direct instance is not affected
		assertThat(first.status("/outage/closed", "X-Client", client)).isEqualTo(200);
		proxy.latency(Duration.ZERO);
		Outages.awaitEnforced(second);
	}

	@Test
	void anInstanceStartedWhileRedisIsUnreachableServesAndEnforcesOnceRedisAnswers() {
		try (TcpProxy unreachable = TcpProxy.start(redis.address())) {
			unreachable.refuse();
			ConfigurableApplicationContext late = Outages.start(unreachable.port());
			try {
				Http http = Outages.http(late);
				String client = "late-" + Outages.nextClient();
				assertThat(http.status("/open")).isEqualTo(200);
				assertThat(http.status("/outage/open", "X-Client", client)).isEqualTo(200);
				assertThat(http.status("/outage/closed", "X-Client", client)).isEqualTo(503);
				assertThat(http.get("/actuator/health/ratelimit").body()).contains("\"degraded\":true");
				unreachable.restore();
				Outages.awaitEnforced(http);
				// it now shares the limit with the instances that were up all along
				assertThat(Outages.admittedOnClosedPath(9, http, first, second)).isEqualTo(5);
			}
			finally {
				late.close();
			}
		}
	}

	/** What a client sees while Redis is gone: each policy's failure mode, and unlimited paths untouched. */
	private void assertDuringOutage() {
		String client = "outage-" + Outages.nextClient();
		HttpResponse<String> open = first.get("/outage/open", "X-Client", client);
		assertThat(open.statusCode()).isEqualTo(200);
		// fail-open claims no quota it could not check
		assertThat(open.headers().firstValue("RateLimit")).isEmpty();
		assertThat(open.headers().firstValue("X-RateLimit-Remaining")).isEmpty();
		HttpResponse<String> closed = second.get("/outage/closed", "X-Client", client);
		assertThat(closed.statusCode()).isEqualTo(503);
		assertThat(closed.headers().firstValue("Retry-After")).isPresent();
		assertThat(closed.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(closed.body())
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\"")
			.contains("\"status\":503")
			.contains("outage-closed");
		// local: the limit per instance, with the usual headers and 429s
		for (Http http : new Http[] { first, second }) {
			int admitted = 0;
			for (int i = 0; i < 8; i++) {
				HttpResponse<String> local = http.get("/outage/local", "X-Client", client);
				assertThat(local.statusCode()).isIn(200, 429);
				assertThat(local.headers().firstValue("RateLimit")).isPresent();
				admitted += (local.statusCode() == 200) ? 1 : 0;
			}
			assertThat(admitted).isEqualTo(5);
		}
		assertThat(first.status("/open")).isEqualTo(200);
		assertThat(second.status("/open")).isEqualTo(200);
		// the ratelimit contributor says what happens, without marking the application down
		await(() -> first.get("/actuator/health/ratelimit").body().contains("\"degraded\":true"));
		assertThat(first.status("/actuator/health/ratelimit")).isEqualTo(200);
		assertThat(first.status("/actuator/health/readiness")).isEqualTo(200);
	}

	private static void await(BooleanSupplier condition) {
		Wait.until(Duration.ofSeconds(20), condition);
	}


}
