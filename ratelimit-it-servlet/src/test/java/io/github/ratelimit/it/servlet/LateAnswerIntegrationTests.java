package io.github.ratelimit.it.servlet;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances on one Redis, one of them behind a loopback proxy that delays Redis' answers beyond the default
 * 50 ms budget (the breaker off, so that it keeps asking, as it does while Redis is merely slow): the requests it
 * serves by the failure modes meanwhile are counted in Redis once the answers arrive, so the other instance admits
 * only what is left of the shared limit. Asserted on counts, never on timings.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LateAnswerIntegrationTests {

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(\\d+)");

	private static RedisServer redis;

	private static TcpProxy proxy;

	private static ConfigurableApplicationContext direct;

	private static ConfigurableApplicationContext slow;

	@BeforeAll
	static void startInstances() {
		redis = RedisServer.start();
		proxy = TcpProxy.start(redis.address());
		direct = start(redis.port());
		slow = start(proxy.port());
	}

	@AfterAll
	static void stopInstances() {
		Outages.close(direct);
		Outages.close(slow);
		if (proxy != null) {
			proxy.close();
		}
		if (redis != null) {
			redis.close();
		}
	}

	@Test
	void requestsServedWhileRedisAnswersLateAreCountedAgainstTheSharedLimit() {
		Http first = Outages.http(direct);
		Http late = Outages.http(slow);
		String client = "late-" + Outages.nextClient();
		// both instances decide by Redis first, so the slow one's connection and scripts are ready
		Wait.until(Duration.ofSeconds(20), () -> late.get("/outage/closed", "X-Client", "warm-" + client)
			.statusCode() == 200);
		proxy.latency(Duration.ofMillis(120));
		for (int i = 0; i < 4; i++) {
			assertThat(late.status("/outage/open", "X-Client", client)).isEqualTo(200);
			assertThat(late.status("/outage/local", "X-Client", client)).isEqualTo(200);
		}
		proxy.latency(Duration.ZERO);
		// Redis counts the four requests served on each path: one left of five
		Wait.until(Duration.ofSeconds(20),
				() -> remaining(first, "outage-open", client) == 1 && remaining(first, "outage-local", client) == 1);
		for (String path : new String[] { "/outage/open", "/outage/local" }) {
			assertThat(first.status(path, "X-Client", client)).isEqualTo(200);
			assertThat(first.status(path, "X-Client", client)).isEqualTo(429);
		}
	}

	/** What Redis has left of a policy's quota for a client, read through the endpoint without taking any. */
	private static long remaining(Http http, String policy, String client) {
		String body = http.get("/actuator/ratelimits/" + policy + "/" + client).body();
		Matcher remaining = REMAINING.matcher(body);
		assertThat(remaining.find()).as(body).isTrue();
		return Long.parseLong(remaining.group(1));
	}

	/** An instance with the starter's default budget, no breaker, and the endpoint exposed. */
	private static ConfigurableApplicationContext start(int redisPort) {
		return new SpringApplicationBuilder(TestApplication.class).run("--server.port=0",
				"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redisPort,
				"--ratelimit.redis.timeout=50ms", "--ratelimit.redis.circuit-breaker.enabled=false",
				"--management.endpoints.web.exposure.include=health,ratelimits");
	}

}
