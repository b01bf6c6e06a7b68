package io.github.ratelimit.spring.client;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * The {@code WebClient} side of a {@link RateLimitedPartner}: the call's turn is a delay (no thread waits), a refusal
 * it may retry releases the body and is sent again. Only a request without a body is sent again: a body inserter
 * may stream a one-shot source, so a refused call with a body fails with the partner's figures instead.
 */
public final class PartnerExchangeFilter implements ExchangeFilterFunction {

	private final RateLimitedPartner partner;

	private PartnerExchangeFilter(RateLimitedPartner partner) {
		this.partner = partner;
	}

	/**
	 * The filter to add to the {@code WebClient} that calls a partner:
	 * {@code builder.filter(PartnerExchangeFilter.of(clients.partner("payments")))}.
	 * @param partner the partner
	 * @return its filter
	 */
	public static PartnerExchangeFilter of(RateLimitedPartner partner) {
		return new PartnerExchangeFilter(partner);
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		return Mono.defer(() -> attempt(request, next, this.partner.deadline(), 0, null));
	}

	/** Whether the request has no body (the inserter of {@code BodyInserters.empty()}, which a GET gets). */
	static boolean bodiless(ClientRequest request) {
		return request.body() == BodyInserters.empty();
	}

	private Mono<ClientResponse> attempt(ClientRequest request, ExchangeFunction next, long deadline, int retries,
			@Nullable PartnerResponse last) {
		return this.partner.awaitTurn(deadline, retries, last)
			.then(Mono.defer(() -> next.exchange(request)))
			.flatMap((response) -> this.partner.observe(response.statusCode().value(), response.headers().asHttpHeaders())
				.flatMap((seen) -> switch (this.partner.verdict(seen, request.method(), retries, bodiless(request))) {
					case PASS -> Mono.just(response);
					case RETRY -> response.releaseBody()
						.then(Mono.defer(() -> attempt(request, next, deadline, retries + 1, seen)));
					case REFUSE -> response.releaseBody().then(Mono.error(this.partner.refusal(seen)));
				}));
	}

}
