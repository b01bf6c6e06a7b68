package com.example.orders;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.test.EmbeddedRedis;
import io.github.ratelimit.test.RateLimitTester;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The released starter in a user's application: this test's application and a second instance on the same
 * embedded Redis (ratelimit-test) share one limit, and a Redis outage is decided by each policy's failure mode.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@EmbeddedRedis
class TwoInstancesTests {

	private static ConfigurableApplicationContext second;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	@Value("${local.server.port}")
	int port;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeAll
	static void startSecondInstance(RedisServer redis) {
		String redisVersion = redis.commands().info("server").lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.findFirst()
			.orElse("redis_version:?");
		System.out.printf("User app on Spring Boot %s, Java %s, Redis %s%n", SpringBootVersion.getVersion(),
				Runtime.version(), redisVersion.substring("redis_version:".length()).strip());
		second = new SpringApplicationBuilder(OrdersApplication.class).run("--server.port=0",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port());
	}

	@AfterAll
	static void stopSecondInstance() {
		second.close();
	}

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll();
	}

	@Test
	void theTwoInstancesShareOneLimit() throws Exception {
		int secondPort = Integer.parseInt(second.getEnvironment().getProperty("local.server.port", "0"));
		for (int i = 0; i < 5; i++) {
			assertThat(status(i % 2 == 0 ? this.port : secondPort, "/api/orders")).isEqualTo(200);
		}
		assertThat(status(this.port, "/api/orders")).isEqualTo(429);
		assertThat(status(secondPort, "/api/orders")).isEqualTo(429);
		assertThat(this.rateLimits.remaining("orders", "global")).isZero();
	}

	@Test
	void aRedisOutageIsDecidedByEachPolicysFailureMode(RedisServer redis) throws Exception {
		redis.kill();
		try {
			assertThat(status(this.port, "/api/orders")).isEqualTo(200);     // open: served unchecked
			assertThat(status(this.port, "/api/payments")).isEqualTo(503);   // closed: refused, not a 429
		}
		finally {
			redis.restart();
		}
		// enforcement resumes once the breaker's probes find Redis again (an outcome awaited, no time asserted)
		await().atMost(Duration.ofMinutes(1)).until(() -> status(this.port, "/api/payments") == 200);
	}

	private int status(int port, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

}
