package io.github.ratelimit.it.servlet;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Real HTTP to the application on the loopback interface.
 */
final class Http {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(TIMEOUT)
		.build();

	private final int port;

	/** How long a request waits for its response; an HttpTimeoutException beyond. */
	private final Duration timeout;

	Http(int port) {
		this(port, TIMEOUT);
	}

	Http(int port, Duration timeout) {
		this.port = port;
		this.timeout = timeout;
	}

	/**
	 * A GET request.
	 * @param path the path
	 * @param headers header names and values, alternating
	 * @return the response
	 */
	HttpResponse<String> get(String path, String... headers) {
		try {
			return this.client.send(request(path, headers), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	CompletableFuture<HttpResponse<String>> getAsync(String path, String... headers) {
		return this.client.sendAsync(request(path, headers), HttpResponse.BodyHandlers.ofString());
	}

	int status(String path, String... headers) {
		return get(path, headers).statusCode();
	}

	private HttpRequest request(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(this.timeout)
			.GET();
		for (int i = 0; i < headers.length; i += 2) {
			builder.header(headers[i], headers[i + 1]);
		}
		return builder.build();
	}

	/**
	 * A GET request over a plain socket, returning the response exactly as it came over the wire (status line,
	 * headers and body).
	 * @param path the path
	 * @return the raw response
	 */
	String raw(String path) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), (int) TIMEOUT.toMillis());
			socket.setSoTimeout((int) this.timeout.toMillis());
			OutputStream out = socket.getOutputStream();
			out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost:" + this.port + "\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream response = new ByteArrayOutputStream();
			in.transferTo(response);
			return response.toString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
