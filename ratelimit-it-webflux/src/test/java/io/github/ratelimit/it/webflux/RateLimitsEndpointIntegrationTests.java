package io.github.ratelimit.it.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} Actuator endpoint on two WebFlux instances sharing one Redis (policy {@code shared}:
 * sliding window log, 10 per hour per {@code X-Client}, on {@code /shared/**}): usage read on one instance without
 * consuming, a reset, a policy override written on one instance governing the other within 2 s, the kill switch, and
 * writes refused without access.
 */
class RateLimitsEndpointIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	/**
	 * How long an override or reset may take to reach the other instance: pub/sub carries it at once, the periodic
	 * reconcile within seconds; a bound for a loaded machine, not a figure the test checks.
	 */
	private static final Duration PROPAGATION = Duration.ofSeconds(20);

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static final String CLIENT = "endpoint-client";

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	private static ConfigurableApplicationContext readOnly;

	/**
	 * Every instance lives as long as the class: closing a reactive application disposes Reactor Netty's global
	 * resources, which the other instances of this JVM share.
	 */
	@BeforeAll
	static void startInstances() {
		first = start("unrestricted");
		second = start("unrestricted");
		readOnly = start("read-only");
	}

	@AfterAll
	static void stopInstances() {
		for (ConfigurableApplicationContext instance : new ConfigurableApplicationContext[] { first, second,
				readOnly }) {
			if (instance != null) {
				instance.close();
			}
		}
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		Wait.until(PROPAGATION, () -> limitSeenBy(first) == 10 && limitSeenBy(second) == 10);
	}

	@Test
	void usageIsReadOnTheOtherInstanceWithoutConsumingAndAResetStartsFresh() {
		for (int i = 0; i < 3; i++) {
			assertThat(send(first, "GET", "/shared/hello", null).statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(body(send(second, "GET", "/actuator/ratelimits/shared/" + CLIENT, null), 200))
				.containsEntry("remaining", 7);
		}
		assertThat(send(first, "GET", "/shared/hello", null).headers().firstValue("X-RateLimit-Remaining"))
			.hasValue("6");
		assertThat(body(send(second, "DELETE", "/actuator/ratelimits/shared/" + CLIENT, null), 200))
			.containsEntry("reset", true);
		assertThat(send(first, "GET", "/shared/hello", null).headers().firstValue("X-RateLimit-Remaining"))
			.hasValue("9");
	}

	@Test
	void aPolicyOverrideAndTheKillSwitchReachTheOtherInstance() {
		body(send(first, "POST", "/actuator/ratelimits/shared", "{\"limit\": 2}"), 200);
		Wait.until(PROPAGATION, () -> limitSeenBy(second) == 2);
		assertThat(send(second, "GET", "/shared/hello", null).statusCode()).isEqualTo(200);
		assertThat(send(second, "GET", "/shared/hello", null).statusCode()).isEqualTo(200);
		assertThat(send(second, "GET", "/shared/hello", null).statusCode()).isEqualTo(429);
		body(send(first, "POST", "/actuator/ratelimits/shared", "{\"enabled\": false}"), 200);
		Wait.until(PROPAGATION, () -> send(second, "GET", "/shared/hello", null).statusCode() == 200);
		body(send(second, "DELETE", "/actuator/ratelimits/shared", null), 200);
		Wait.until(PROPAGATION, () -> limitSeenBy(first) == 10);
		assertThat(send(first, "POST", "/actuator/ratelimits/shared", "{\"window\": \"soon\"}").statusCode())
			.isEqualTo(400);
	}

	@Test
	void writesAreRefusedWhenTheEndpointIsReadOnly() {
		assertThat(send(readOnly, "GET", "/actuator/ratelimits", null).statusCode()).isEqualTo(200);
		assertThat(send(readOnly, "POST", "/actuator/ratelimits/shared", "{\"limit\": 1}").statusCode())
			.isBetween(400, 499);
		assertThat(redis.commands().hgetall("rl:overrides")).isEmpty();
	}

	private static long limitSeenBy(ConfigurableApplicationContext instance) {
		Map<String, Object> usage = body(send(instance, "GET", "/actuator/ratelimits/shared/" + CLIENT, null), 200);
		return ((Number) usage.get("limit")).longValue();
	}

	private static ConfigurableApplicationContext start(String access) {
		return new SpringApplicationBuilder(WebfluxTestApplication.class).web(WebApplicationType.REACTIVE)
			.run("--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--management.endpoints.web.exposure.include=ratelimits",
					"--management.endpoint.ratelimits.access=" + access);
	}

	private static HttpResponse<String> send(ConfigurableApplicationContext instance, String method, String path,
			String body) {
		int port = instance.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		// a connection per request: Reactor Netty 1.3.7's keep-alive stall (reactor/reactor-netty#4361)
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Connection", "close")
			.header("X-Client", CLIENT);
		if (body != null) {
			request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
		}
		else {
			request.method(method, HttpRequest.BodyPublishers.noBody());
		}
		try {
			return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> body(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return json.readValue(response.body(), Map.class);
	}

}
