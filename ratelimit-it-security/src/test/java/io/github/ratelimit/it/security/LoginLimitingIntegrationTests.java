package io.github.ratelimit.it.security;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import io.github.ratelimit.testkit.CpuLoad;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The login-limiting recipe with Spring Security on the classpath: form login and HTTP Basic attempts are limited
 * per client address before authentication (5 per hour) and per claimed username (3 per hour), and the 429 reaches
 * the client, even for the right password once the limit is reached. The policies fail to {@code local}, so no
 * attempt beyond the limit is admitted by this instance whether Redis answers in time or not: every test runs on a
 * machine made busy (threads spinning on every core) with the starter's default time budget, and one with Redis
 * slower than the budget. Each test has an application of its own, whose fallback counts start empty.
 */
@SpringBootTest(classes = SecuredApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class LoginLimitingIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private static final TcpProxy proxy = TcpProxy.start(redis.address());

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private CpuLoad load;

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> proxy.address().host());
		registry.add("spring.data.redis.port", () -> proxy.address().port());
	}

	@BeforeEach
	void emptyRedisAndABusyMachine() {
		proxy.latency(Duration.ZERO);
		redis.flushAll();
		this.load = CpuLoad.start();
	}

	@AfterEach
	void idleMachine() {
		this.load.close();
		proxy.latency(Duration.ZERO);
	}

	@Test
	void noAttemptBeyondTheLimitIsAdmittedWhileRedisAnswersLaterThanTheBudget() {
		proxy.latency(Duration.ofMillis(200));
		for (int i = 0; i < 5; i++) {
			assertThat(formLogin("203.0.113.50", "user-" + i, "wrong").statusCode()).isEqualTo(302);
		}
		HttpResponse<String> denied = formLogin("203.0.113.50", "alice", "alice-secret");
		assertThat(denied.statusCode()).as("this instance counted the attempts itself").isEqualTo(429);
		assertThat(denied.body()).contains("\"violated-policies\":[\"login-per-ip\"]");
		for (int i = 0; i < 3; i++) {
			assertThat(formLogin("203.0.113.6" + i, "carol", "guess-" + i).statusCode()).isEqualTo(302);
		}
		assertThat(formLogin("203.0.113.69", "carol", "guess-9").statusCode()).isEqualTo(429);
	}

	@Test
	void formLoginAttemptsArePerAddressBeforeAuthentication() {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> failed = formLogin("203.0.113.1", "user-" + i, "wrong");
			assertThat(failed.statusCode()).as("Spring Security answers: back to the login page").isEqualTo(302);
			assertThat(failed.headers().firstValue("Location")).hasValueSatisfying((location) -> assertThat(location)
				.endsWith("/login?error"));
		}
		HttpResponse<String> denied = formLogin("203.0.113.1", "alice", "alice-secret");
		assertThat(denied.statusCode()).as("the right password too, once the address is out of attempts")
			.isEqualTo(429);
		assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(denied.headers().firstValue("Retry-After")).isPresent();
		assertThat(denied.body()).contains("\"violated-policies\":[\"login-per-ip\"]");
		HttpResponse<String> elsewhere = formLogin("203.0.113.2", "alice", "alice-secret");
		assertThat(elsewhere.statusCode()).as("another address logs in").isEqualTo(302);
		assertThat(elsewhere.headers().firstValue("Location")).hasValueSatisfying((location) -> assertThat(location)
			.doesNotContain("error"));
	}

	@Test
	void formLoginAttemptsArePerUsernameAcrossAddresses() {
		for (int i = 0; i < 3; i++) {
			assertThat(formLogin("198.51.100." + i, "Alice", "guess-" + i).statusCode()).isEqualTo(302);
		}
		HttpResponse<String> denied = formLogin("198.51.100.9", "alice", "guess-9");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.body()).contains("\"violated-policies\":[\"login-per-username\"]");
		assertThat(formLogin("198.51.100.9", "bob", "bob-secret").statusCode()).as("another username").isEqualTo(302);
	}

	@Test
	void httpBasicAttemptsAreLimitedPerUsernameAndTheRightCredentialsStillWorkElsewhere() {
		for (int i = 0; i < 3; i++) {
			assertThat(basic("192.0.2." + i, "alice", "wrong").statusCode()).as("Spring Security refuses")
				.isEqualTo(401);
		}
		HttpResponse<String> denied = basic("192.0.2.7", "alice", "alice-secret");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("RateLimit")).hasValueSatisfying((value) -> assertThat(value)
			.contains("\"login-per-username\";r=0;"));
		HttpResponse<String> bob = basic("192.0.2.8", "bob", "bob-secret");
		assertThat(bob.statusCode()).isEqualTo(200);
		assertThat(bob.body()).isEqualTo("hello bob");
	}

	private HttpResponse<String> formLogin(String address, String username, String password) {
		return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString("username=" + username + "&password=" + password)));
	}

	private HttpResponse<String> basic(String address, String username, String password) {
		String credentials = Base64.getEncoder()
			.encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
		return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/hello"))
			.header("X-Forwarded-For", address)
			.header("Authorization", "Basic " + credentials)
			.GET());
	}

	private HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return this.client.send(request.timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
