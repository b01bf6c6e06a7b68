package io.github.ratelimit.it.servlet;

import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.testkit.HttpLoad;
import io.github.ratelimit.testkit.Wait;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the outage and failover tests share: application instances with health exposed, load on the failure-mode
 * paths ({@code /outage/open}, {@code /outage/closed}, {@code /outage/local}, and {@code /open}, not limited), and
 * the checks of what clients saw.
 */
final class Outages {

	/** A request not answered within this is a hung request, and fails the test. */
	static final Duration HUNG = Duration.ofSeconds(5);

	private static int clients;

	private Outages() {
	}

	/** A client name never used before, for a fresh quota. */
	static synchronized int nextClient() {
		return ++clients;
	}

	/**
	 * The number of admissions of a new client on the closed path, spread over instances in turn.
	 * @param requests how many requests to send
	 * @param instances the instances
	 * @return how many were admitted; the others were 429
	 */
	static int admittedOnClosedPath(int requests, Http... instances) {
		return admittedOnClosedPath("shared-" + nextClient(), requests, instances);
	}

	/**
	 * The number of admissions of a client on the closed path, spread over instances in turn. A 503 (Redis did not
	 * decide within the budget, as happens on a loaded machine) counted nothing, and is sent again.
	 * @param client the client
	 * @param requests how many requests Redis must decide
	 * @param instances the instances
	 * @return how many were admitted; the others were 429
	 */
	static int admittedOnClosedPath(String client, int requests, Http... instances) {
		int admitted = 0;
		for (int i = 0; i < requests; i++) {
			Http http = instances[i % instances.length];
			int[] status = { 0 };
			Wait.until(Duration.ofSeconds(20), () -> {
				status[0] = http.status("/outage/closed", "X-Client", client);
				return status[0] != 503;
			});
			assertThat(status[0]).isIn(200, 429);
			admitted += (status[0] == 200) ? 1 : 0;
		}
		return admitted;
	}

	/** Over the whole load: every request answered; no 5xx but the closed policy's 503s. */
	static void assertOutcomes(List<HttpLoad.Response> responses, long failedAt) {
		assertThat(responses).isNotEmpty();
		assertThat(responses).allSatisfy((response) -> {
			assertThat(response.error()).as("%s", response).isNull();
			switch (response.path()) {
				case "/outage/open" -> assertThat(response.status()).as("%s", response).isIn(200, 429);
				case "/outage/local" -> assertThat(response.status()).as("%s", response).isIn(200, 429);
				case "/outage/closed" -> {
					assertThat(response.status()).as("%s", response).isIn(200, 429, 503);
					if (response.status() == 503) {
						assertThat(response.header("Retry-After")).isPresent();
					}
				}
				default -> assertThat(response.status()).as("%s", response).isEqualTo(200);
			}
		});
		assertThat(responses.stream().filter((r) -> r.sentAfter(failedAt) && r.status() == 503)).isNotEmpty();
	}

	/**
	 * Waits until an instance's decisions are made by Redis again: five in a row for new clients on the closed
	 * path, which answers 503 whenever Redis cannot decide.
	 */
	static void awaitEnforced(Http http) {
		int[] inARow = { 0 };
		Wait.until(Duration.ofSeconds(20), () -> {
			int status = http.status("/outage/closed", "X-Client", "probe-" + nextClient());
			inARow[0] = (status == 200) ? inARow[0] + 1 : 0;
			return inARow[0] >= 5;
		});
	}

	/** Load on the instances and all paths, from 50 rotating clients. */
	static HttpLoad load(int... ports) {
		String[] paths = { "/outage/open", "/outage/closed", "/outage/local", "/open" };
		return HttpLoad.startRequests(8, HUNG, (n) -> HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + ports[(int) (n % ports.length)]
					+ paths[(int) ((n / ports.length) % paths.length)]))
			.header("X-Client", "load-" + (n % 50))
			.timeout(HUNG)
			.GET()
			.build());
	}

	/**
	 * An instance of the application on a standalone Redis.
	 * @param redisPort the port of Redis (or of a proxy in front of it) on the loopback interface
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(int redisPort) {
		return start("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redisPort);
	}

	/**
	 * An instance of the application with health details and probes exposed.
	 * @param redisProperties how it reaches Redis
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(String... redisProperties) {
		return new SpringApplicationBuilder(TestApplication.class)
			.properties(redisProperties)
			.properties("server.port=0",
					"management.endpoints.web.exposure.include=health",
					"management.endpoint.health.show-details=always",
					"management.endpoint.health.probes.enabled=true")
			// the starter's default budget, over the test application's generous one
			.run("--ratelimit.redis.timeout=50ms");
	}

	static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	static Http http(ConfigurableApplicationContext context) {
		return new Http(port(context));
	}

	static void close(ConfigurableApplicationContext context) {
		if (context != null) {
			context.close();
		}
	}

}
