package io.github.ratelimit.sample;

import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the README's run command starts ({@link TestSampleApplication}): a Redis, the sample, and a second instance
 * in a JVM of its own; a client's requests spread over both count against one limit.
 */
class TwoInstancesTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void twoInstancesShareOneLimit() throws Exception {
		File log = new File("target/second-instance.log");
		try (TestSampleApplication.Running running = TestSampleApplication.start(Redirect.to(log), "--server.port=0",
				"--" + TestSampleApplication.SECOND_PORT + "=" + freePort())) {
			int first = TestSampleApplication.port(running.first());
			int second = running.secondPort();
			await().atMost(120, TimeUnit.SECONDS)
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> get(second, "/actuator/health").statusCode() == 200);
			int[] ports = { first, second, first, second, first };
			for (int i = 0; i < ports.length; i++) {
				HttpResponse<String> response = get(ports[i], "/hello");
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(4 - i));
			}
			HttpResponse<String> sixth = get(second, "/hello");
			assertThat(sixth.statusCode()).isEqualTo(429);
			assertThat(sixth.headers().firstValue("Retry-After")).isPresent();
			assertThat(get(first, "/hello").statusCode()).isEqualTo(429);
			assertThat(get(second, "/actuator/health/ratelimit").body()).contains("\"backend\":\"redis\"");
		}
	}

	private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
