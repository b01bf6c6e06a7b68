package io.github.ratelimit.it.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application on a random port against the shared real Redis server, requests over real HTTP, and BlockHound
 * watching every non-blocking thread: each test fails when a blocking call was detected during it.
 */
@SpringBootTest(classes = WebfluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
abstract class WebfluxIntegrationTestSupport {

	static final RedisServer REDIS;

	static {
		BlockingCalls.install();
		REDIS = RedisServers.standalone();
	}

	static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", REDIS::host);
		registry.add("spring.data.redis.port", REDIS::port);
	}

	@BeforeEach
	void freshCounters() {
		REDIS.flushAll();
		BlockingCalls.drain();
	}

	@AfterEach
	void noBlockingCallOnANonBlockingThread() {
		assertThat(BlockingCalls.drain()).as("blocking calls detected by BlockHound").isEmpty();
	}

	HttpResponse<String> get(String path, String client) {
		return get(this.port, path, client);
	}

	static HttpResponse<String> get(int port, String path, String client, String... headers) {
		// a connection per request: Reactor Netty 1.3.7 (Boot 4.1.1's) can stop reading a keep-alive connection
		// (reactor/reactor-netty#4361; seen here once as a request timing out on a loaded machine)
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.header("Connection", "close")
			.header("X-Client", client);
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + path + " (X-Client: " + client + ") failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

}
