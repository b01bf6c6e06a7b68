package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit meters as Prometheus scrapes them from {@code /actuator/prometheus}: decisions by policy and
 * outcome, the decision timer by backend and outcome, errors by kind, permits in flight per concurrency policy; the
 * identity (here an order id) in no series.
 */
class MetricsIntegrationTests extends IntegrationTestSupport {

	private static final String IDENTITY = "4711-secret-order";

	@Test
	void aDenialShowsInThePrometheusScrape() {
		assertThat(this.http.status("/orders/" + IDENTITY)).isEqualTo(200);
		assertThat(this.http.status("/orders/" + IDENTITY)).isEqualTo(200);
		assertThat(this.http.status("/orders/" + IDENTITY)).isEqualTo(429);
		HttpResponse<String> scrape = this.http.get("/actuator/prometheus");
		assertThat(scrape.statusCode()).isEqualTo(200);
		assertThat(scrape.body()).contains(
				"ratelimit_decisions_total{outcome=\"denied\",policy=\"per-order\",tier=\"none\"}",
				"ratelimit_decisions_total{outcome=\"allowed\",policy=\"per-order\",tier=\"none\"}",
				"ratelimit_decision_seconds_count{backend=\"redis\",error=\"none\",outcome=\"denied\"}",
				"ratelimit_decision_seconds_sum{backend=\"redis\",error=\"none\",outcome=\"allowed\"}",
				"ratelimit_decision_active_seconds", "ratelimit_errors_total{kind=\"timeout\"}",
				"ratelimit_permits_active{policy=\"single\"}",
				// the second admission left 0 of 2: near the limit
				"ratelimit_near_limit_total{policy=\"per-order\",tier=\"none\"}")
			.doesNotContain(IDENTITY)
			.doesNotContain("ratelimit_decision_seconds_bucket");
	}

	@Test
	void theCircuitBreakerHasResilience4jsOwnMeters() {
		assertThat(this.http.status("/orders/breaker-probe")).isEqualTo(200);
		String scrape = this.http.get("/actuator/prometheus").body();
		assertThat(scrape).contains(
				"resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"closed\"} 1.0",
				"resilience4j_circuitbreaker_state{name=\"ratelimit-redis\",state=\"open\"} 0.0",
				"resilience4j_circuitbreaker_calls_seconds_count{kind=\"successful\",name=\"ratelimit-redis\"}",
				"resilience4j_circuitbreaker_failure_rate{name=\"ratelimit-redis\"}");
	}

}
