package io.github.ratelimit.it.webflux;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit meters of the reactive path as Prometheus scrapes them from {@code /actuator/prometheus}: decisions
 * by policy and outcome, the decision timer by backend and outcome, errors by kind, permits in flight per
 * concurrency policy; the identity (here the {@code X-Client} header) in no series.
 */
class MetricsIntegrationTests extends WebfluxIntegrationTestSupport {

	private static final String IDENTITY = "4711-secret-client";

	@Test
	void aDenialShowsInThePrometheusScrape() {
		for (int i = 0; i < 5; i++) {
			assertThat(get("/api/hello", IDENTITY).statusCode()).isEqualTo(200);
		}
		assertThat(get("/api/hello", IDENTITY).statusCode()).isEqualTo(429);
		HttpResponse<String> scrape = get("/actuator/prometheus", "scraper");
		assertThat(scrape.statusCode()).isEqualTo(200);
		assertThat(scrape.body()).contains(
				"ratelimit_decisions_total{outcome=\"denied\",policy=\"per-client\",tier=\"none\"}",
				"ratelimit_decisions_total{outcome=\"allowed\",policy=\"per-client\",tier=\"none\"}",
				"ratelimit_decision_seconds_count{backend=\"redis\",error=\"none\",outcome=\"denied\"}",
				"ratelimit_decision_seconds_sum{backend=\"redis\",error=\"none\",outcome=\"allowed\"}",
				"ratelimit_decision_active_seconds", "ratelimit_errors_total{kind=\"timeout\"}",
				"ratelimit_permits_active{policy=\"slots\"}")
			.doesNotContain(IDENTITY)
			.doesNotContain("ratelimit_decision_seconds_bucket");
	}

}
