package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.spring.RateLimitExceededException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimited} on a service of a servlet application ({@link PartnerService}): in a request it waits for its
 * turn or its denial becomes the 429; outside a request it is limited too.
 */
class RateLimitedBeanIntegrationTests extends IntegrationTestSupport {

	@Autowired
	PartnerService partner;

	@Test
	void aServiceCallInARequestWaitsForItsTurnInsteadOfFailing() {
		int before = this.partner.quotes();
		List<CompletableFuture<HttpResponse<String>>> responses = List.of(this.http.getAsync("/partner/quote/a"),
				this.http.getAsync("/partner/quote/b"), this.http.getAsync("/partner/quote/c"));
		// one turn every 300 ms for this client: three requests at once all get theirs, none is refused
		assertThat(responses).map(CompletableFuture::join)
			.allSatisfy((response) -> assertThat(response.statusCode()).isEqualTo(200))
			.extracting(HttpResponse::body)
			.containsExactlyInAnyOrder("quote a", "quote b", "quote c");
		assertThat(this.partner.quotes() - before).isEqualTo(3);
	}

	@Test
	void aServiceDenialInARequestBecomesThe429AndOutsideARequestAnException() {
		assertThat(this.http.status("/partner/batch")).isEqualTo(200);
		// outside a request: the same policy, the same global identity
		assertThat(this.partner.batch()).isEqualTo("batch");
		HttpResponse<String> denied = this.http.get("/partner/batch");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
				(policy) -> assertThat(policy).contains("\"partner-batch\""));
		assertThat(denied.headers().firstValue("Retry-After")).isPresent();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.partner::batch)
			.satisfies((denial) -> assertThat(denial.decision().deciding().orElseThrow().policy().name())
				.isEqualTo("partner-batch"));
	}

}
