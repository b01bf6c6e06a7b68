package io.github.ratelimit.it.webflux;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency permits (policy {@code slots}: one request in flight per client) are released when the exchange
 * completes, fails, finishes a stream, or is cancelled by a client that goes away.
 */
class ConcurrencyPermitIntegrationTests extends WebfluxIntegrationTestSupport {

	@Test
	void permitsAreReleasedWhenTheResponseCompletes() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = get("/slot/ok", "completing");
			assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"slots\";q=1;qu=\"concurrent-requests\"");
		}
	}

	@Test
	void permitsAreReleasedWhenTheHandlerFails() {
		assertThat(get("/slot/error", "failing").statusCode()).isEqualTo(500);
		assertThat(get("/slot/error", "failing").statusCode()).isEqualTo(500);
		assertThat(get("/slot/ok", "failing").statusCode()).isEqualTo(200);
	}

	@Test
	void permitsAreReleasedWhenAStreamCompletes() {
		HttpResponse<String> stream = get("/slot/sse-finite", "streaming");
		assertThat(stream.statusCode()).isEqualTo(200);
		assertThat(stream.body()).contains("data:event-0").contains("data:event-1").contains("data:event-2");
		assertThat(get("/slot/ok", "streaming").statusCode()).isEqualTo(200);
	}

	@Test
	void aClientThatGoesAwayMidStreamReleasesTheMethodsPermit() throws Exception {
		cancelMidStream("/slot/sse-infinite", "/slot/ok", "leaving");
	}

	@Test
	void aClientThatGoesAwayMidStreamReleasesTheFilterRulesPermit() throws Exception {
		cancelMidStream("/rule-stream/infinite", "/rule-stream/once", "leaving-rule");
	}

	private void cancelMidStream(String streamPath, String probePath, String client) throws Exception {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("GET " + streamPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Client: " + client
					+ "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String received = readUntil(socket.getInputStream(), "data:tick-0");
			assertThat(received).startsWith("HTTP/1.1 200 OK").contains("RateLimit-Policy: \"slots\";q=1;qu=\"concurrent-requests\"");
			assertThat(get(probePath, client).statusCode()).as("the stream holds the only permit").isEqualTo(429);
			HttpResponse<String> secondStream = get(streamPath, client);
			assertThat(secondStream.statusCode()).as("a second stream is refused before it starts").isEqualTo(429);
			assertThat(header(secondStream, "Content-Type")).isEqualTo("application/problem+json");
		}
		// the socket is closed: the server cancels the stream and releases the permit, asynchronously
		assertThat(pollUntilAdmitted(probePath, client)).isEqualTo(200);
	}

	private int pollUntilAdmitted(String path, String client) throws InterruptedException {
		long deadline = System.nanoTime() + 10_000_000_000L;
		int status = get(path, client).statusCode();
		while (status != 200 && System.nanoTime() < deadline) {
			Thread.sleep(50);
			status = get(path, client).statusCode();
		}
		return status;
	}

	private static String readUntil(InputStream in, String marker) throws IOException {
		StringBuilder received = new StringBuilder();
		byte[] buffer = new byte[1024];
		while (received.indexOf(marker) < 0) {
			int read = in.read(buffer);
			if (read < 0) {
				break;
			}
			received.append(new String(buffer, 0, read, StandardCharsets.UTF_8));
		}
		return received.toString();
	}

}
