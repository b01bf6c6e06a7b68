package io.github.ratelimit.it.webflux;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.spring.RateLimitExceededException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimited} on a service of a WebFlux application ({@link PartnerService}): in an exchange a call waits
 * for its turn without blocking (BlockHound watches), outside one it is limited, blocking methods included.
 */
class RateLimitedBeanIntegrationTests extends WebfluxIntegrationTestSupport {

	@Autowired
	PartnerService partner;

	@Test
	void aServiceCallInAnExchangeWaitsForItsTurnWithoutBlocking() {
		int before = this.partner.quotes();
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			responses.add(CompletableFuture.supplyAsync(() -> get("/partner/quote/initech", "c1")));
		}
		// one turn every 300 ms for the tenant: three requests at once all get theirs, none is refused
		assertThat(responses).map(CompletableFuture::join)
			.allSatisfy((response) -> assertThat(response.statusCode()).isEqualTo(200))
			.extracting(HttpResponse::body)
			.containsOnly("quote initech");
		assertThat(this.partner.quotes() - before).isEqualTo(3);
	}

	@Test
	void outsideAnExchangeReactiveAndBlockingServiceMethodsAreLimited() {
		assertThat(this.partner.batch()).isEqualTo("batch");
		assertThat(this.partner.batch()).isEqualTo("batch");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.partner::batch)
			.satisfies((denial) -> assertThat(denial.decision().deciding().orElseThrow().policy().name())
				.isEqualTo("partner-batch"));
		// a subscription outside an exchange: checked as a bean call, waiting for its turn
		assertThat(this.partner.quote("hooli").block()).isEqualTo("quote hooli");
		assertThat(this.partner.quote("hooli").block()).isEqualTo("quote hooli");
	}

}
