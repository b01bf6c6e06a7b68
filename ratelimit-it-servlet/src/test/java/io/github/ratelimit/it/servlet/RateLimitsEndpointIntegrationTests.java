package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} Actuator endpoint on two instances sharing one Redis (policy {@code shared}: GCRA, 10 per
 * hour per client address, on {@code /shared/**}): usage read on one instance without consuming, resets, runtime
 * overrides written on one instance governing the other within 2 s and surviving a restart, refused writes
 * without access, 400 for invalid bodies; an {@code @RateLimited} SpEL key's identities named by their source.
 */
class RateLimitsEndpointIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	/**
	 * How long an override or reset may take to reach the other instance: pub/sub carries it at once, the periodic
	 * reconcile within seconds; a bound for a loaded machine, not a figure the test checks.
	 */
	private static final Duration PROPAGATION = Duration.ofSeconds(20);

	private static final String CLIENT = "127.0.0.1";

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void startInstances() {
		first = start("unrestricted");
		second = start("unrestricted");
	}

	@AfterAll
	static void stopInstances() {
		Instances.stop(first, second);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		// what an earlier test left applied is gone from Redis: wait until both instances have let it go
		Wait.until(PROPAGATION, () -> limitSeenBy(first, CLIENT) == 10 && limitSeenBy(second, CLIENT) == 10);
	}

	@Test
	void listsEveryPolicyWithItsSettings() {
		Map<String, Object> body = body(send(second, "GET", "/actuator/ratelimits", null), 200);
		Map<String, Object> shared = map(map(body.get("policies")).get("shared"));
		assertThat(shared).containsEntry("algorithm", "gcra").containsEntry("limit", 10).containsEntry("key", "ip");
		assertThat(map(body.get("policies"))).containsKeys("per-client", "quick", "single");
	}

	@Test
	void oneIdentitysUsageIsReadOnTheOtherInstanceWithoutConsumingAnything() {
		Http http = http(first);
		for (int i = 0; i < 3; i++) {
			assertThat(http.status("/shared/hello")).isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			Map<String, Object> usage = body(send(second, "GET", "/actuator/ratelimits/shared/" + CLIENT, null), 200);
			assertThat(usage).containsEntry("limit", 10).containsEntry("remaining", 7).containsEntry("allowed", true);
		}
		assertThat(http.get("/shared/hello").headers().firstValue("X-RateLimit-Remaining")).hasValue("6");
	}

	@Test
	void aResetIdentityStartsFresh() {
		Http http = http(first);
		for (int i = 0; i < 10; i++) {
			http.status("/shared/hello");
		}
		assertThat(http.status("/shared/hello")).isEqualTo(429);
		assertThat(body(send(second, "DELETE", "/actuator/ratelimits/shared/" + CLIENT, null), 200))
			.containsEntry("reset", true);
		assertThat(http.get("/shared/hello").headers().firstValue("X-RateLimit-Remaining")).hasValue("9");
	}

	@Test
	void aPolicyOverrideWrittenOnOneInstanceGovernsTheOtherUntilRemoved() {
		Map<String, Object> answer = body(send(first, "POST", "/actuator/ratelimits/shared", "{\"limit\": 2}"), 200);
		assertThat(map(answer.get("effective"))).containsEntry("limit", 2);
		Wait.until(PROPAGATION, () -> limitSeenBy(second, CLIENT) == 2);
		Http other = http(second);
		assertThat(other.status("/shared/hello")).isEqualTo(200);
		assertThat(other.status("/shared/hello")).isEqualTo(200);
		assertThat(other.status("/shared/hello")).isEqualTo(429);
		Map<String, Object> listed = map(map(body(send(second, "GET", "/actuator/ratelimits", null), 200)
			.get("policies")).get("shared"));
		assertThat(map(map(listed.get("runtimeOverrides")).get("policy"))).containsEntry("limit", 2);
		body(send(second, "DELETE", "/actuator/ratelimits/shared", null), 200);
		Wait.until(PROPAGATION, () -> limitSeenBy(first, CLIENT) == 10);
		assertThat(http(first).status("/shared/hello")).isEqualTo(200);
	}

	@Test
	void anIdentityOverrideLeavesOtherIdentitiesAlone() {
		body(send(first, "POST", "/actuator/ratelimits/shared/" + CLIENT, "{\"limit\": 1, \"window\": \"1m\"}"), 200);
		Wait.until(PROPAGATION, () -> limitSeenBy(second, CLIENT) == 1);
		assertThat(limitSeenBy(second, "192.0.2.7")).isEqualTo(10);
		Http other = http(second);
		assertThat(other.status("/shared/hello")).isEqualTo(200);
		assertThat(other.status("/shared/hello")).isEqualTo(429);
		body(send(second, "DELETE", "/actuator/ratelimits/shared/" + CLIENT + "?override=true", null), 200);
		Wait.until(PROPAGATION, () -> limitSeenBy(first, CLIENT) == 10);
	}

	@Test
	void anAnnotationsSpelKeyIdentityIsReadResetAndOverriddenThroughItsSource() {
		// @RateLimited(value = "per-order", key = "#id") on /orders/{id}: counted as el.<hash of "#id">:<id>, apart
		// from the policy's own key (ip)
		String source = KeySpec.parse("#id", (name) -> null).source();
		String path = "/actuator/ratelimits/per-order/42?source=" + source;
		Map<String, Object> answer = body(send(first, "POST", path, "{\"limit\": 3}"), 200);
		assertThat(answer).containsEntry("identity", source + ":42");
		Wait.until(PROPAGATION, () -> ((Number) body(send(second, "GET", path, null), 200).get("limit"))
			.longValue() == 3);
		Http other = http(second);
		for (int i = 0; i < 3; i++) {
			assertThat(other.status("/orders/42")).isEqualTo(200);
		}
		assertThat(other.status("/orders/42")).isEqualTo(429);
		// another order keeps the policy's 2
		assertThat(other.get("/orders/7").headers().firstValue("X-RateLimit-Limit")).hasValue("2");
		assertThat(body(send(first, "GET", path, null), 200)).containsEntry("remaining", 0)
			.containsEntry("allowed", false);
		// the policy's own key's identity of that value is another one, untouched
		assertThat(body(send(first, "GET", "/actuator/ratelimits/per-order/42", null), 200))
			.containsEntry("identity", "ip:42")
			.containsEntry("remaining", 2);

		assertThat(body(send(first, "DELETE", path, null), 200)).containsEntry("reset", true);
		assertThat(other.status("/orders/42")).isEqualTo(200);
		assertThat(body(send(second, "DELETE", path + "&override=true", null), 200))
			.containsEntry("overrideRemoved", true);
		Wait.until(PROPAGATION, () -> ((Number) body(send(first, "GET", path, null), 200).get("limit"))
			.longValue() == 2);
	}

	@Test
	void theKillSwitchTurnsEnforcementOffForOnePolicyOrForAllOnEveryInstance() {
		body(send(first, "POST", "/actuator/ratelimits/shared", "{\"enabled\": false}"), 200);
		Wait.until(PROPAGATION, () -> Boolean.FALSE.equals(sharedPolicyAsSeenBy(second).get("enforced")));
		Http other = http(second);
		for (int i = 0; i < 15; i++) {
			assertThat(other.get("/shared/hello").statusCode()).isEqualTo(200);
		}
		// unchecked and uncounted
		assertThat(body(send(second, "GET", "/actuator/ratelimits/shared/" + CLIENT, null), 200))
			.containsEntry("remaining", 10);
		body(send(first, "POST", "/actuator/ratelimits/shared", "{\"enabled\": true}"), 200);
		Wait.until(PROPAGATION, () -> Boolean.TRUE.equals(sharedPolicyAsSeenBy(second).get("enforced")));
		assertThat(other.get("/shared/hello").headers().firstValue("X-RateLimit-Remaining")).hasValue("9");

		body(send(first, "POST", "/actuator/ratelimits", "{\"enabled\": false}"), 200);
		Wait.until(PROPAGATION,
				() -> Boolean.FALSE.equals(body(send(second, "GET", "/actuator/ratelimits", null), 200).get("enabled")));
		for (int i = 0; i < 8; i++) {
			// per-client admits 5 a minute when enforced
			assertThat(other.status("/api/hello")).isEqualTo(200);
		}
		body(send(first, "POST", "/actuator/ratelimits", "{\"enabled\": true}"), 200);
		Wait.until(PROPAGATION,
				() -> Boolean.TRUE.equals(body(send(second, "GET", "/actuator/ratelimits", null), 200).get("enabled")));
	}

	private static Map<String, Object> sharedPolicyAsSeenBy(ConfigurableApplicationContext instance) {
		return map(map(body(send(instance, "GET", "/actuator/ratelimits", null), 200).get("policies")).get("shared"));
	}

	@Test
	void overridesSurviveARestartOfEveryInstance() {
		body(send(first, "POST", "/actuator/ratelimits/shared", "{\"limit\": 3}"), 200);
		ConfigurableApplicationContext restarted = start("read-only");
		try {
			// a new instance reads the overrides when it starts, before serving
			assertThat(limitSeenBy(restarted, CLIENT)).isEqualTo(3);
		}
		finally {
			restarted.close();
		}
		body(send(first, "DELETE", "/actuator/ratelimits/shared", null), 200);
	}

	@Test
	void invalidBodiesAreRefusedWith400NamingTheFieldAndChangeNothing() {
		assertThat(send(first, "POST", "/actuator/ratelimits/shared", "{\"limit\": 0}").statusCode()).isEqualTo(400);
		HttpResponse<String> badWindow = send(first, "POST", "/actuator/ratelimits/shared", "{\"window\": \"soon\"}");
		assertThat(badWindow.statusCode()).isEqualTo(400);
		assertThat(badWindow.body()).contains("window");
		assertThat(send(first, "POST", "/actuator/ratelimits/shared", "{}").statusCode()).isEqualTo(400);
		assertThat(send(first, "POST", "/actuator/ratelimits/nope", "{\"limit\": 5}").statusCode()).isEqualTo(400);
		// deletes on an unknown policy name it too
		for (String path : new String[] { "/actuator/ratelimits/nope", "/actuator/ratelimits/nope/" + CLIENT,
				"/actuator/ratelimits/nope/" + CLIENT + "?override=true" }) {
			HttpResponse<String> unknown = send(first, "DELETE", path, null);
			assertThat(unknown.statusCode()).as(path).isEqualTo(400);
			assertThat(unknown.body()).as(path).contains("Unknown rate-limit policy 'nope'");
		}
		assertThat(limitSeenBy(first, CLIENT)).isEqualTo(10);
		assertThat(redis.commands().hgetall("rl:overrides")).isEmpty();
	}

	@Test
	void writesAreRefusedWhenTheEndpointIsReadOnly() {
		ConfigurableApplicationContext readOnly = start("read-only");
		try {
			assertThat(send(readOnly, "GET", "/actuator/ratelimits/shared/" + CLIENT, null).statusCode()).isEqualTo(200);
			assertThat(send(readOnly, "POST", "/actuator/ratelimits/shared", "{\"limit\": 1}").statusCode())
				.isBetween(400, 499);
			assertThat(send(readOnly, "DELETE", "/actuator/ratelimits/shared/" + CLIENT, null).statusCode())
				.isBetween(400, 499);
			assertThat(redis.commands().hgetall("rl:overrides")).isEmpty();
		}
		finally {
			readOnly.close();
		}
	}

	private static long limitSeenBy(ConfigurableApplicationContext instance, String identity) {
		Map<String, Object> usage = body(send(instance, "GET", "/actuator/ratelimits/shared/" + identity, null), 200);
		return ((Number) usage.get("limit")).longValue();
	}

	private static ConfigurableApplicationContext start(String access) {
		return Instances.start(redis, "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=" + access);
	}

	private static Http http(ConfigurableApplicationContext context) {
		return Instances.http(context);
	}

	private static HttpResponse<String> send(ConfigurableApplicationContext instance, String method, String path,
			String body) {
		return Actuator.send(instance, method, path, body);
	}

	private static Map<String, Object> body(HttpResponse<String> response, int status) {
		return Actuator.body(response, status);
	}

	private static Map<String, Object> map(Object value) {
		return Actuator.map(value);
	}

}
