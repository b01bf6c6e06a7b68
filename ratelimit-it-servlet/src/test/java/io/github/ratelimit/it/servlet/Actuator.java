package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** Calls of an instance's Actuator endpoints over real HTTP, and their JSON bodies. */
final class Actuator {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private Actuator() {
	}

	/**
	 * Sends a request.
	 * @param instance the instance
	 * @param method the HTTP method
	 * @param path the path and query
	 * @param body a JSON body, or null
	 * @return the response
	 */
	static HttpResponse<String> send(ConfigurableApplicationContext instance, String method, String path,
			String body) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + Instances.port(instance) + path))
			.timeout(Duration.ofSeconds(30));
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

	/**
	 * The JSON body of a response, asserting its status.
	 * @param response the response
	 * @param status the status expected
	 * @return the body
	 */
	@SuppressWarnings("unchecked")
	static Map<String, Object> body(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return json.readValue(response.body(), Map.class);
	}

	/**
	 * A JSON document read as a map.
	 * @param document the JSON text
	 * @return the map
	 */
	@SuppressWarnings("unchecked")
	static Map<String, Object> read(String document) {
		return json.readValue(document, Map.class);
	}

	/**
	 * A JSON object of a body.
	 * @param value the value
	 * @return the value as a map
	 */
	@SuppressWarnings("unchecked")
	static Map<String, Object> map(Object value) {
		return (Map<String, Object>) value;
	}

}
