package io.github.ratelimit.it.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.it.support.FrozenRedisHealthScenarios;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Health on the reactive stack while Redis is frozen, with the documented production setup
 * ({@link FrozenRedisHealthScenarios}), under BlockHound: no contributor blocks an event loop while it waits.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FrozenRedisHealthIntegrationTests {

	static {
		BlockingCalls.install();
	}

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static RedisServer redis;

	private static ConfigurableApplicationContext application;

	@BeforeAll
	static void start() {
		BlockingCalls.drain();
		redis = RedisServer.start();
		List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port()));
		FrozenRedisHealthScenarios.PRODUCTION_SETUP.forEach((property) -> arguments.add("--" + property));
		FrozenRedisHealthScenarios.VISIBLE_DETAILS.forEach((property) -> arguments.add("--" + property));
		application = new SpringApplicationBuilder(WebfluxTestApplication.class).web(WebApplicationType.REACTIVE)
			.run(arguments.toArray(String[]::new));
	}

	@AfterAll
	static void stop() {
		if (application != null) {
			application.close();
		}
		if (redis != null) {
			redis.close();
		}
	}

	@Test
	void theAggregateAnswersDownWhileRedisIsFrozenAndTheProbesStayUp() {
		int port = application.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		FrozenRedisHealthScenarios.healthAnswersWhileRedisIsFrozen((path, client) -> get(port, path, client), redis);
		assertThat(BlockingCalls.drain()).as("blocking calls detected by BlockHound").isEmpty();
	}

	private static HttpResponse<String> get(int port, String path, String client) {
		// a new connection per request: Reactor Netty 1.3.7's keep-alive stall (reactor/reactor-netty#4361)
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Client", client)
			.header("Connection", "close")
			.timeout(FrozenRedisHealthScenarios.CLIENT_TIMEOUT)
			.GET()
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + path + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
