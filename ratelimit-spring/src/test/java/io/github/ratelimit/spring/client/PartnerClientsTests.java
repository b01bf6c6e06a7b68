package io.github.ratelimit.spring.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The RestClient interceptor and the WebClient filter against a real HTTP server answering a script of responses:
 * a refusal retried or failed, a turn beyond the maximum wait, a 503 without Retry-After passed through.
 */
class PartnerClientsTests {

	/** One scripted answer: status and headers. */
	private record Answer(int status, Map<String, String> headers) {
	}

	private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();

	private final AtomicInteger received = new AtomicInteger();

	private final AtomicInteger retried = new AtomicInteger();

	private final AtomicInteger waited = new AtomicInteger();

	private HttpServer server;

	@BeforeEach
	void start() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", this::answer);
		this.server.start();
	}

	@AfterEach
	void stop() {
		this.server.stop(0);
	}

	private void answer(HttpExchange exchange) throws IOException {
		this.received.incrementAndGet();
		Answer answer = this.script.poll();
		if (answer == null) {
			answer = new Answer(200, Map.of());
		}
		answer.headers().forEach(exchange.getResponseHeaders()::set);
		byte[] body = "body".getBytes();
		exchange.sendResponseHeaders(answer.status(), body.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	private RateLimitedPartner partner(Duration maxWait) {
		return partner(maxWait, false);
	}

	private RateLimitedPartner partner(Duration maxWait, boolean retryNonIdempotent) {
		return new RateLimitedPartner("p", new RateLimitedPartner.Settings(maxWait, 3, retryNonIdempotent, 0.5),
				new LocalPartnerState(), new PartnerCallListener() {
					@Override
					public void waited(String partner, Duration wait) {
						PartnerClientsTests.this.waited.incrementAndGet();
					}

					@Override
					public void retried(String partner, int status) {
						PartnerClientsTests.this.retried.incrementAndGet();
					}
				});
	}

	private String url() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	private WebClient webClient(RateLimitedPartner partner) {
		return WebClient.builder()
			.baseUrl(url())
			.clientConnector(new JdkClientHttpConnector())
			.filter(PartnerExchangeFilter.of(partner))
			.build();
	}

	private RestClient restClient(RateLimitedPartner partner) {
		return RestClient.builder()
			.baseUrl(url())
			.requestFactory(new JdkClientHttpRequestFactory())
			.requestInterceptor(partner.interceptor())
			.build();
	}

	@Test
	void webClientRetriesAGetAfterItsRetryAfter() {
		this.script.add(new Answer(429, Map.of("Retry-After", "1", "RateLimit", "\"q\";r=0;t=1")));
		String body = webClient(partner(Duration.ofSeconds(30))).get().uri("/x").retrieve().bodyToMono(String.class)
			.block();
		assertThat(body).isEqualTo("body");
		assertThat(this.received).hasValue(2);
		assertThat(this.retried).hasValue(1);
		assertThat(this.waited).hasValue(1);
	}

	@Test
	void webClientDoesNotRetryAPost() {
		this.script.add(new Answer(429, Map.of("Retry-After", "1")));
		assertThatExceptionOfType(PartnerRateLimitedException.class)
			.isThrownBy(() -> webClient(partner(Duration.ofSeconds(30))).post().uri("/x").retrieve()
				.bodyToMono(String.class).block())
			.satisfies((refused) -> assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
		assertThat(this.received).hasValue(1);
		assertThat(this.retried).hasValue(0);
	}

	@Test
	void webClientDoesNotResendARequestBodyButTheRestClientDoes() {
		// a WebClient body inserter may stream a one-shot source: the refusal is given with the partner's figures
		this.script.add(new Answer(429, Map.of("Retry-After", "1")));
		assertThatExceptionOfType(PartnerRateLimitedException.class)
			.isThrownBy(() -> webClient(partner(Duration.ofSeconds(30))).put().uri("/x").bodyValue("payload")
				.retrieve().bodyToMono(String.class).block());
		assertThat(this.received).hasValue(1);
		// the RestClient's body is a byte array it holds: sent again
		this.script.add(new Answer(429, Map.of("Retry-After", "1")));
		assertThat(restClient(partner(Duration.ofSeconds(30))).put().uri("/x").body("payload").retrieve()
			.body(String.class)).isEqualTo("body");
		assertThat(this.received).hasValue(3);
	}

	@Test
	void aRetryAfterOfZeroIsNotResentInATightLoop() {
		// the least wait before a retry (1 s) exceeds a maximum wait of 500 ms: failed, sent once
		this.script.add(new Answer(429, Map.of("Retry-After", "0")));
		assertThatExceptionOfType(PartnerRateLimitedException.class)
			.isThrownBy(() -> restClient(partner(Duration.ofMillis(500))).get().uri("/x").retrieve()
				.body(String.class));
		assertThat(this.received).hasValue(1);
		assertThat(this.retried).hasValue(0);
		// within a longer wait the retries go, each after its least wait (counted as waits)
		this.script.add(new Answer(429, Map.of("Retry-After", "0")));
		this.script.add(new Answer(429, Map.of("Retry-After", "0")));
		assertThat(restClient(partner(Duration.ofSeconds(30))).get().uri("/x").retrieve().body(String.class))
			.isEqualTo("body");
		assertThat(this.received).hasValue(4);
		assertThat(this.retried).hasValue(2);
		assertThat(this.waited).hasValue(2);
	}

	@Test
	void aPostIsRetriedWhenConfigured() {
		this.script.add(new Answer(503, Map.of("Retry-After", "1")));
		String body = restClient(partner(Duration.ofSeconds(30), true)).post().uri("/x").retrieve()
			.body(String.class);
		assertThat(body).isEqualTo("body");
		assertThat(this.received).hasValue(2);
		assertThat(this.retried).hasValue(1);
	}

	@Test
	void aRetryAfterBeyondTheMaximumWaitFailsWithThePartnersFigures() {
		this.script.add(new Answer(429, Map.of("Retry-After", "60", "X-RateLimit-Limit", "10",
				"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "60")));
		assertThatExceptionOfType(PartnerRateLimitedException.class)
			.isThrownBy(() -> restClient(partner(Duration.ofSeconds(5))).get().uri("/x").retrieve().body(String.class))
			.satisfies((refused) -> {
				assertThat(refused.status()).isEqualTo(429);
				assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(60));
				assertThat(refused.quotas()).containsExactly(
						new PartnerQuota(PartnerHeaders.LEGACY_POLICY, "", 0, 60, 10L, null));
			});
		assertThat(this.received).hasValue(1);
		assertThat(this.retried).hasValue(0); // a retry that would come too late is not counted
	}

	@Test
	void aTurnBeyondTheMaximumWaitIsNotSent() {
		RateLimitedPartner partner = partner(Duration.ofSeconds(5));
		this.script.add(new Answer(200, Map.of("RateLimit", "\"q\";r=0;t=60", "RateLimit-Policy", "\"q\";q=5;w=60")));
		assertThat(restClient(partner).get().uri("/x").retrieve().body(String.class)).isEqualTo("body");
		assertThatExceptionOfType(PartnerRateLimitedException.class)
			.isThrownBy(() -> restClient(partner).get().uri("/x").retrieve().body(String.class))
			.satisfies((refused) -> assertThat(refused.status()).isZero());
		assertThat(this.received).hasValue(1);
	}

	@Test
	void aPassThroughPartnerGivesARefusalToTheCaller() {
		this.script.add(new Answer(429, Map.of("Retry-After", "1")));
		assertThatExceptionOfType(HttpClientErrorException.TooManyRequests.class)
			.isThrownBy(() -> restClient(RateLimitedPartner.passThrough("p")).get().uri("/x").retrieve()
				.body(String.class));
		assertThat(this.received).hasValue(1);
	}

	@Test
	void aServiceUnavailableWithoutRetryAfterPassesThrough() {
		this.script.add(new Answer(503, Map.of()));
		assertThatExceptionOfType(HttpServerErrorException.ServiceUnavailable.class)
			.isThrownBy(() -> restClient(partner(Duration.ofSeconds(5))).get().uri("/x").retrieve().body(String.class));
		assertThat(this.received).hasValue(1);
		assertThat(List.of(this.retried.get(), this.waited.get())).containsOnly(0);
	}

}
