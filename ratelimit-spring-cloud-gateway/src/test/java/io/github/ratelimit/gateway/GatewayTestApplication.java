package io.github.ratelimit.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * A gateway as users run it: Spring Cloud Gateway with the starter and this module, routes and policies from
 * {@code application.yml} (the backend's address and Redis from the arguments), on a random port.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class GatewayTestApplication {

	static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	/**
	 * The identity of every route (and the gateway's default key resolver): the X-Client header, so that each test
	 * counts for clients of its own.
	 */
	@Bean
	@Primary
	KeyResolver clientKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Client"));
	}

	/**
	 * Event loops of this gateway's own: with Reactor Netty's global ones (Spring Boot's default), closing one
	 * gateway of the JVM disposes the loops the others run on.
	 */
	@Bean
	ReactorResourceFactory reactorResourceFactory() {
		ReactorResourceFactory factory = new ReactorResourceFactory();
		factory.setUseGlobalResources(false);
		return factory;
	}

	/** The tenant of a request, from the X-Tenant header. */
	@Bean
	KeyResolver tenantKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Tenant"));
	}

	/**
	 * Starts a gateway.
	 * @param backend the service routed to
	 * @param arguments more properties, as {@code --name=value}
	 * @return the running gateway
	 */
	static ConfigurableApplicationContext start(Backend backend, String... arguments) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--backend.uri=" + backend.uri()));
		args.addAll(List.of(arguments));
		return new SpringApplicationBuilder(GatewayTestApplication.class).web(WebApplicationType.REACTIVE)
			.run(args.toArray(String[]::new));
	}

	/**
	 * Closes what a test class started, in order, skipping what never started.
	 * @param resources gateways, backends, servers
	 */
	static void closeAll(AutoCloseable... resources) {
		for (AutoCloseable resource : resources) {
			if (resource != null) {
				try {
					resource.close();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Could not close " + resource, ex);
				}
			}
		}
	}

	static int port(ConfigurableApplicationContext gateway) {
		return gateway.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	static HttpResponse<String> get(ConfigurableApplicationContext gateway, String path, String client,
			String... headers) {
		try {
			return HTTP.send(request(gateway, path, client, headers), HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException("GET " + path + " (X-Client: " + client + ") failed", ex);
		}
	}

	/**
	 * Sends a request without waiting for its answer (on the HTTP client's own threads, so that several are in flight
	 * at once).
	 * @param gateway the gateway
	 * @param path the path
	 * @param client the X-Client header
	 * @return the response, or the failure
	 */
	static CompletableFuture<HttpResponse<String>> getAsync(ConfigurableApplicationContext gateway, String path,
			String client) {
		return HTTP.sendAsync(request(gateway, path, client), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest request(ConfigurableApplicationContext gateway, String path, String client,
			String... headers) {
		// a connection per request: Reactor Netty 1.3.7 stops reading a keep-alive connection when a request it
		// buffered (sent before the previous exchange had completed, as after a proxied response) is answered at
		// once, and the next request on that connection then hangs until the client gives up
		// (reactor/reactor-netty#4361). With Redis frozen and the circuit open the gateway answers a closed policy's
		// requests at once (503), so the outage tests met it: a hang that is Reactor Netty's, not the limiter's
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(gateway) + path))
			.timeout(Duration.ofSeconds(10))
			.header("Connection", "close")
			.header("X-Client", client);
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return request.build();
	}

	static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

}
