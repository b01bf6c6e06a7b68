package io.github.ratelimit.it.jedis;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A user's application on Jedis, each instance a JVM of its own on one real Redis. With {@code lettuce-core} on
 * the class path and {@code spring.data.redis.client-type=jedis} (the documented setup), two instances run on
 * Jedis's connection factory, share one limit, and a killed Redis is decided by each policy's failure mode until
 * Redis is back. Without Lettuce at all, the application stops at startup with a report naming the fix.
 */
class JedisIntegrationTests {

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	private static RedisServer redis;

	private static final List<Process> instances = new ArrayList<>();

	private static final List<Integer> ports = new ArrayList<>();

	@BeforeAll
	static void startRedisAndTwoInstances() throws IOException {
		redis = RedisServer.start();
		for (int i = 1; i <= 2; i++) {
			int port = freePort();
			instances.add(new ProcessBuilder(javaCommand(true, port)).redirectErrorStream(true)
				.redirectOutput(new File("target/jedis-instance-" + i + ".log"))
				.start());
			ports.add(port);
		}
		for (int port : ports) {
			await().atMost(Duration.ofMinutes(3)).ignoreExceptions().until(() -> get(port, "/client").statusCode() == 200);
		}
	}

	@AfterAll
	static void stop() throws InterruptedException {
		for (Process instance : instances) {
			instance.destroy();
			instance.waitFor();
		}
		redis.stop();
	}

	@BeforeEach
	void forgetCounts() {
		redis.flushAll();
	}

	@Test
	void theInstancesRunOnJedis() throws Exception {
		for (int port : ports) {
			assertThat(get(port, "/client").body()).isEqualTo("JedisConnectionFactory with Lettuce");
		}
	}

	@Test
	void withoutLettuceTheApplicationStopsAtStartupNamingTheFix() throws Exception {
		File log = new File("target/jedis-without-lettuce.log");
		Process instance = new ProcessBuilder(javaCommand(false, freePort())).redirectErrorStream(true)
			.redirectOutput(log)
			.start();
		assertThat(instance.waitFor(3, TimeUnit.MINUTES)).as("the application stopped").isTrue();
		assertThat(instance.exitValue()).isNotZero();
		assertThat(Files.readString(log.toPath())).contains("APPLICATION FAILED TO START")
			.contains("io.lettuce:lettuce-core")
			.contains("JedisConnectionFactory")
			.contains("spring.data.redis.client-type=jedis")
			.doesNotContain("NoClassDefFoundError");
	}

	@Test
	void theTwoInstancesShareOneLimit() throws Exception {
		for (int i = 0; i < 5; i++) {
			assertThat(get(ports.get(i % 2), "/api/orders").statusCode()).isEqualTo(200);
		}
		assertThat(get(ports.get(0), "/api/orders").statusCode()).isEqualTo(429);
		HttpResponse<String> denied = get(ports.get(1), "/api/orders");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("Retry-After")).isPresent();
	}

	@Test
	void aRedisOutageIsDecidedByEachPolicysFailureMode() throws Exception {
		redis.kill();
		try {
			for (int port : ports) {
				assertThat(get(port, "/api/orders").statusCode()).isEqualTo(200);     // open: served unchecked
				assertThat(get(port, "/api/payments").statusCode()).isEqualTo(503);   // closed: refused
			}
		}
		finally {
			redis.restart();
		}
		// enforcement resumes once Redis answers again (an outcome awaited, no time asserted)
		for (int port : ports) {
			await().atMost(Duration.ofMinutes(1)).until(() -> get(port, "/api/payments").statusCode() == 200);
		}
	}

	/** This module's test class path, with or without Lettuce; Jedis as the client either way. */
	private static List<String> javaCommand(boolean withLettuce, int port) {
		String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
			.filter(entry -> withLettuce || !Path.of(entry).getFileName().toString().startsWith("lettuce-core"))
			.collect(Collectors.joining(File.pathSeparator));
		return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
				JedisApplication.class.getName(), "--server.port=" + port, "--spring.data.redis.client-type=jedis",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port());
	}

	private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
