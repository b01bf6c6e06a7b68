package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A layer between {@link DefaultRateLimiter} and its backend (architecture.md, "The composition"): the backend's
 * acquire, answering with the decision, so that what a layer adds (a failure mode's decision, permits) travels back.
 */
interface Decider {

	/**
	 * Decides a request without blocking: within the time budget when the layers hold one.
	 * @param request the request, its entries all enforced or all shadow
	 * @return the decision
	 */
	Mono<RateLimitDecision> decide(RateLimitRequest request);

	/**
	 * Decides now, on the calling thread, when the layers below answer without waiting
	 * ({@link RateLimitBackend#acquireAtOnce}); otherwise takes nothing and answers null (a layer that cannot: always),
	 * and the caller goes through {@link #decide}.
	 * @param request the request, its entries all enforced or all shadow
	 * @return the decision, or null
	 */
	default @Nullable RateLimitDecision decideAtOnce(RateLimitRequest request) {
		return null;
	}

}
