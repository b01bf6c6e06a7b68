package io.github.ratelimit.it.support;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.Wait;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Health while Redis is frozen ({@code SIGSTOP}), on an application started with {@link #PRODUCTION_SETUP} (the
 * setup docs/configuration.md documents) and {@link #VISIBLE_DETAILS}: the aggregate {@code /actuator/health}
 * answers DOWN (Spring Boot's {@code redis} contributor fails after {@code spring.data.redis.timeout}), the
 * {@code ratelimit} contributor stays UP and says it is degraded, the liveness and readiness groups stay UP, and all
 * is UP again after the thaw. The caller's HTTP client gives up on a response after 10 s: an aggregate that waited
 * for Lettuce's default command timeout (60 s) fails the scenario. The application maps {@code /outage/open} to a
 * policy keyed by {@code X-Client} with {@code failure-mode: open}.
 */
public final class FrozenRedisHealthScenarios {

	/** What docs/configuration.md documents for production (Health and probes). */
	public static final List<String> PRODUCTION_SETUP = List.of("spring.data.redis.timeout=1s",
			"spring.data.redis.connect-timeout=1s", "management.endpoint.health.probes.enabled=true");

	/** What the scenario reads: every contributor's status and details, and the starter's default budget. */
	public static final List<String> VISIBLE_DETAILS = List.of("management.endpoints.web.exposure.include=health",
			"management.endpoint.health.show-details=always", "ratelimit.redis.timeout=50ms");

	/** How long the caller's HTTP client waits for a response: more than the documented bound, less than 60 s. */
	public static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration RECOVERY = Duration.ofSeconds(30);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private FrozenRedisHealthScenarios() {
	}

	/**
	 * Freezes Redis twice: the first time before the aggregate was ever asked (Spring Boot's {@code redis}
	 * contributor opens its connection on first use, so it connects to the frozen server and its handshake times
	 * out), the second time with that connection open (its command times out). Thaws it in the end, also when an
	 * assertion fails.
	 * @param http the application
	 * @param redis the application's Redis, not shared with other applications
	 */
	public static void healthAnswersWhileRedisIsFrozen(HttpGet http, RedisServer redis) {
		assertProbesUp(http);
		assertThat(status(http, "/actuator/health/ratelimit")).isEqualTo("UP");
		try {
			redis.freeze();
			// the ratelimit contributor never asks Redis: no decision has failed yet
			JsonNode before = assertFrozen(http, "Unable to connect to Redis");
			assertThat(before.path("details").path("degraded").asBoolean()).isFalse();
			openTheCircuit(http);
			JsonNode ratelimit = assertFrozen(http, "Unable to connect to Redis");
			assertThat(ratelimit.path("details").path("degraded").asBoolean()).isTrue();
			assertThat(ratelimit.path("details").path("circuitBreaker").asString()).isEqualTo("OPEN");
			redis.thaw();
			assertRecovered(http);
			redis.freeze();
			assertFrozen(http, "Redis command timed out");
		}
		finally {
			redis.thaw();
		}
		assertRecovered(http);
	}

	/**
	 * The aggregate while Redis is frozen: 503 DOWN, from the {@code redis} contributor; {@code ratelimit} UP; the
	 * probes UP.
	 * @param error what the {@code redis} contributor's error says
	 * @return the {@code ratelimit} contributor's report
	 */
	private static JsonNode assertFrozen(HttpGet http, String error) {
		HttpResponse<String> response = http.get("/actuator/health", "health");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
		JsonNode health = JSON.readTree(response.body());
		assertThat(health.path("status").asString()).isEqualTo("DOWN");
		JsonNode redis = health.path("components").path("redis");
		assertThat(redis.path("status").asString()).as(response.body()).isEqualTo("DOWN");
		assertThat(redis.path("details").path("error").asString()).as(response.body()).contains(error);
		JsonNode ratelimit = health.path("components").path("ratelimit");
		assertThat(ratelimit.path("status").asString()).as(response.body()).isEqualTo("UP");
		assertProbesUp(http);
		return ratelimit;
	}

	/** Decisions on the open path while Redis is frozen (each admitted by its failure mode) until the circuit opens. */
	private static void openTheCircuit(HttpGet http) {
		Wait.until("the circuit breaker to open", RECOVERY, () -> {
			assertThat(http.get("/outage/open", "frozen").statusCode()).isEqualTo(200);
			return report(http, "/actuator/health/ratelimit").path("details").path("circuitBreaker").asString()
				.equals("OPEN");
		});
	}

	/**
	 * After the thaw: the aggregate UP (every contributor) once decisions are made by Redis again: the contributor is
	 * degraded until the failure modes made none of the last 100 decisions, so decisions go ten at a time.
	 */
	private static void assertRecovered(HttpGet http) {
		Wait.until("decisions by Redis again", RECOVERY.multipliedBy(2), () -> {
			for (int i = 0; i < 10; i++) {
				http.get("/outage/open", "thawed");
			}
			return !report(http, "/actuator/health/ratelimit").path("details").path("degraded").asBoolean();
		});
		HttpResponse<String> response = http.get("/actuator/health", "health");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		JsonNode health = JSON.readTree(response.body());
		assertThat(health.path("status").asString()).isEqualTo("UP");
		assertThat(health.path("components").path("redis").path("status").asString()).isEqualTo("UP");
		assertThat(health.path("components").path("ratelimit").path("status").asString()).isEqualTo("UP");
		assertProbesUp(http);
	}

	private static void assertProbesUp(HttpGet http) {
		for (String group : List.of("/actuator/health/liveness", "/actuator/health/readiness")) {
			HttpResponse<String> response = http.get(group, "probe");
			assertThat(response.statusCode()).as(group + ": " + response.body()).isEqualTo(200);
			assertThat(JSON.readTree(response.body()).path("status").asString()).isEqualTo("UP");
		}
	}

	private static String status(HttpGet http, String path) {
		return report(http, path).path("status").asString();
	}

	private static JsonNode report(HttpGet http, String path) {
		return JSON.readTree(http.get(path, "health").body());
	}

}
