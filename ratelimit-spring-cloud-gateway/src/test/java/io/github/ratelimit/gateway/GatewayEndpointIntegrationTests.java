package io.github.ratelimit.gateway;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} Actuator endpoint on a real gateway and real Redis, addressing the identities a route
 * counts ({@code bean.gateway-key-resolver:<the key resolver's value>}) with {@code source}: usage reads, resets
 * and per-identity overrides act on what the route's requests are counted under (route {@code shared}: sliding
 * window log, 5 per hour; the policy's own key is {@code ip}).
 */
class GatewayEndpointIntegrationTests {

	private static final String SOURCE = "?source=bean.gateway-key-resolver";

	private static final JsonMapper json = JsonMapper.builder().build();

	private static RedisServer redis;

	private static Backend backend;

	private static ConfigurableApplicationContext gateway;

	@BeforeAll
	static void start() {
		redis = RedisServers.standalone();
		backend = Backend.start();
		gateway = GatewayTestApplication.start(backend, "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--management.endpoints.web.exposure.include=ratelimits",
				"--management.endpoint.ratelimits.access=unrestricted");
	}

	@AfterAll
	static void stop() {
		GatewayTestApplication.closeAll(gateway, backend);
	}

	@BeforeEach
	void freshCounters() {
		redis.flushAll();
		// the gateway applies the overrides it read last until it reads them again: drop them here too
		gateway.getBean(RateLimitPolicyRegistry.class).overrides().refresh();
	}

	@Test
	void aRoutesUsageIsReadUnderTheIdentityItCountsWithoutTakingAnything() {
		for (int i = 0; i < 3; i++) {
			assertThat(get(gateway, "/shared/x", "reader").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 2; i++) {
			JsonNode usage = answer(send("GET", "/actuator/ratelimits/shared/reader" + SOURCE, null), 200);
			assertThat(usage.path("identity").asString()).isEqualTo("bean.gateway-key-resolver:reader");
			assertThat(usage.path("limit").asInt()).isEqualTo(5);
			assertThat(usage.path("remaining").asInt()).isEqualTo(2);
			assertThat(usage.path("allowed").asBoolean()).isTrue();
		}
		assertThat(header(get(gateway, "/shared/x", "reader"), "X-RateLimit-Remaining")).isEqualTo("1");
		// without a source the value is the policy's own key's (ip): an identity the route never counts
		JsonNode ownKey = answer(send("GET", "/actuator/ratelimits/shared/reader", null), 200);
		assertThat(ownKey.path("identity").asString()).isEqualTo("ip:reader");
		assertThat(ownKey.path("remaining").asInt()).isEqualTo(5);
	}

	@Test
	void aResetIdentityOfARouteStartsFresh() {
		for (int i = 0; i < 5; i++) {
			assertThat(get(gateway, "/shared/x", "resetting").statusCode()).isEqualTo(200);
		}
		assertThat(get(gateway, "/shared/x", "resetting").statusCode()).isEqualTo(429);
		JsonNode reset = answer(send("DELETE", "/actuator/ratelimits/shared/resetting" + SOURCE, null), 200);
		assertThat(reset.path("identity").asString()).isEqualTo("bean.gateway-key-resolver:resetting");
		assertThat(reset.path("reset").asBoolean()).isTrue();
		HttpResponse<String> again = get(gateway, "/shared/x", "resetting");
		assertThat(again.statusCode()).isEqualTo(200);
		assertThat(header(again, "X-RateLimit-Remaining")).isEqualTo("4");
	}

	@Test
	void anIdentityOverrideGovernsTheRoutesRequestsOfThatIdentityUntilRemoved() {
		JsonNode set = answer(
				send("POST", "/actuator/ratelimits/shared/vip" + SOURCE, "{\"limit\": 1, \"window\": \"1h\"}"), 200);
		assertThat(set.path("identity").asString()).isEqualTo("bean.gateway-key-resolver:vip");
		assertThat(set.at("/effective/limit").asInt()).isEqualTo(1);
		assertThat(limitOf("vip")).isEqualTo(1);
		assertThat(get(gateway, "/shared/x", "vip").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get(gateway, "/shared/x", "vip");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "X-RateLimit-Limit")).isEqualTo("1");
		// another identity of the route keeps the policy's limit
		assertThat(header(get(gateway, "/shared/x", "other"), "X-RateLimit-Limit")).isEqualTo("5");
		JsonNode listed = answer(send("GET", "/actuator/ratelimits", null), 200);
		assertThat(listed.at("/policies/shared/runtimeOverrides/identities").has("bean.gateway-key-resolver:vip"))
			.isTrue();

		JsonNode removed = answer(
				send("DELETE", "/actuator/ratelimits/shared/vip" + SOURCE + "&override=true", null), 200);
		assertThat(removed.path("overrideRemoved").asBoolean()).isTrue();
		assertThat(limitOf("vip")).isEqualTo(5);
		assertThat(get(gateway, "/shared/x", "vip").statusCode()).isEqualTo(200);
	}

	@Test
	void aSourceThatNoKeyHasIsRefusedAndChangesNothing() {
		for (String source : new String[] { "bean.gateway-key-resolver:x", "Header.X-Api-Key", "el.xyz" }) {
			HttpResponse<String> refused = send("POST", "/actuator/ratelimits/shared/vip?source=" + source,
					"{\"limit\": 1}");
			assertThat(refused.statusCode()).as(source).isEqualTo(400);
			assertThat(refused.body()).as(source).contains("Invalid source");
			assertThat(send("GET", "/actuator/ratelimits/shared/vip?source=" + source, null).statusCode()).as(source)
				.isEqualTo(400);
		}
		assertThat(redis.commands().hgetall("rl:overrides")).isEmpty();
	}

	private static HttpResponse<String> send(String method, String path, String body) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + GatewayTestApplication.port(gateway) + path))
			.timeout(Duration.ofSeconds(10))
			.header("Connection", "close");
		if (body != null) {
			request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
		}
		else {
			request.method(method, HttpRequest.BodyPublishers.noBody());
		}
		try {
			return GatewayTestApplication.HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(method + " " + path + " failed", ex);
		}
	}

	private static int limitOf(String client) {
		return answer(send("GET", "/actuator/ratelimits/shared/" + client + SOURCE, null), 200).path("limit").asInt();
	}

	/** The endpoint's JSON answer, once its status is the expected one. */
	private static JsonNode answer(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return json.readTree(response.body());
	}

}
