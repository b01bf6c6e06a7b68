package io.github.ratelimit.spring;

import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import io.github.ratelimit.core.RateLimitDecision;

import org.springframework.http.HttpHeaders;

/** What a response carries for a decision: the rate-limit headers (as enabled), and the rejection of a denial. */
public final class RateLimitResponses {

	private final RateLimitHeaders headers;

	private final RateLimitRejectionHandler rejectionHandler;

	private final LongSupplier clockMillis;

	/** Responses; {@code clockMillis} is the clock of {@code X-RateLimit-Reset}. */
	public RateLimitResponses(RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler,
			LongSupplier clockMillis) {
		this.headers = headers;
		this.rejectionHandler = rejectionHandler;
		this.clockMillis = clockMillis;
	}

	/** The rate-limit headers of a decision, as enabled. */
	public HttpHeaders headers(RateLimitDecision decision) {
		return this.headers.of(decision, this.clockMillis.getAsLong());
	}

	/** Hands the rate-limit headers of a decision, as enabled, to {@code sink} (name, value), each name once. */
	public void writeHeaders(RateLimitDecision decision, BiConsumer<String, String> sink) {
		this.headers.write(decision, this.clockMillis.getAsLong(), sink);
	}

	/** The response to a denying decision. */
	public Rejection reject(RateLimitDecision decision, RequestContext request) {
		return this.rejectionHandler.reject(decision, request, headers(decision));
	}

}
