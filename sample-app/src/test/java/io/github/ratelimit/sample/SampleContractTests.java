package io.github.ratelimit.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.test.RateLimitTester;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's limits over HTTP on a random port, whatever Redis it runs on: each subclass gives it one.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "sample.report.build-time=2s")
@AutoConfigureRestTestClient
abstract class SampleContractTests {

	@Autowired
	RestTestClient client;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll();
	}

	@Test
	void theSixthHelloOfAClientIsRefusedUntilItsLimitIsReset() {
		for (int i = 1; i <= 5; i++) {
			this.client.get()
				.uri("/hello")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("X-RateLimit-Remaining", String.valueOf(5 - i));
		}
		this.client.get()
			.uri("/hello")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.exists("Retry-After")
			.expectBody()
			.jsonPath("$.policies[0].name")
			.isEqualTo("per-client");
		assertThat(this.rateLimits.state("per-client", "127.0.0.1").allowed()).isFalse();
		this.rateLimits.reset("per-client", "127.0.0.1");
		this.client.get().uri("/hello").exchange().expectStatus().isOk();
	}

	@Test
	void greetingsAreLimitedPerNameWhoeverAsks() {
		this.client.get().uri("/greet/ada").exchange().expectStatus().isOk();
		this.client.get().uri("/greet/ada").exchange().expectStatus().isOk();
		this.client.get().uri("/greet/ada").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.client.get().uri("/greet/alan").exchange().expectStatus().isOk();
		assertThat(this.rateLimits.remaining("per-name", "ada")).isZero();
		assertThat(this.rateLimits.remaining("per-name", "alan")).isEqualTo(1);
	}

	@Test
	void apiKeysGetTheLimitOfTheirTierOrOverride() {
		assertThat(limitOf("free-key-1")).isEqualTo("10");
		assertThat(limitOf("pro-key-1")).isEqualTo("100");
		assertThat(limitOf("enterprise-key-1")).isEqualTo("10000");
		// missing-key: deny is a client error, not a quota to wait for
		this.client.get()
			.uri("/api/quote")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.BAD_REQUEST)
			.expectHeader()
			.doesNotExist("Retry-After");
	}

	@Test
	void aThirdReportWhileTwoAreBuiltIsRefusedAndThePermitsComeBack() throws Exception {
		List<CompletableFuture<HttpStatus>> running = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			running.add(CompletableFuture.supplyAsync(() -> HttpStatus.valueOf(
					this.client.get().uri("/reports/monthly").exchange().returnResult().getStatus().value())));
		}
		await().atMost(30, TimeUnit.SECONDS).until(() -> this.rateLimits.remaining("reports", "global") == 0);
		this.client.get()
			.uri("/reports/monthly")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		for (CompletableFuture<HttpStatus> report : running) {
			assertThat(report.get(60, TimeUnit.SECONDS)).isEqualTo(HttpStatus.OK);
		}
		await().atMost(30, TimeUnit.SECONDS).until(() -> this.rateLimits.remaining("reports", "global") == 2);
	}

	private String limitOf(String apiKey) {
		return this.client.get()
			.uri("/api/quote")
			.header("X-Api-Key", apiKey)
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult()
			.getResponseHeaders()
			.getFirst("X-RateLimit-Limit");
	}

}
