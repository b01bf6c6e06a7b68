package io.github.ratelimit.spring.client;

import java.io.IOException;

import io.github.ratelimit.core.Waits;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The {@code RestClient} side of a {@link RateLimitedPartner}: the calling thread waits for the call's turn, sends
 * it, and sends it again after a refusal it may retry. An interrupt ends the wait with an
 * {@link IllegalStateException}, the thread's flag set.
 */
final class PartnerRateLimitInterceptor implements ClientHttpRequestInterceptor {

	private final RateLimitedPartner partner;

	PartnerRateLimitInterceptor(RateLimitedPartner partner) {
		this.partner = partner;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		long deadline = this.partner.deadline();
		PartnerResponse last = null;
		for (int retries = 0;; retries++) {
			Waits.await(this.partner.awaitTurn(deadline, retries, last));
			ClientHttpResponse response = execution.execute(request, body);
			PartnerResponse seen = seen(response);
			RateLimitedPartner.Verdict verdict = this.partner.verdict(seen, request.getMethod(), retries);
			if (verdict == RateLimitedPartner.Verdict.PASS) {
				return response;
			}
			response.close();
			if (verdict == RateLimitedPartner.Verdict.REFUSE) {
				throw this.partner.refusal(seen);
			}
			last = seen;
		}
	}

	private PartnerResponse seen(ClientHttpResponse response) throws IOException {
		@Nullable PartnerResponse seen = Waits
			.await(this.partner.observe(response.getStatusCode().value(), response.getHeaders()));
		if (seen == null) {
			throw new IllegalStateException("No response read"); // observe always answers
		}
		return seen;
	}

}
