package io.github.ratelimit.core;

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

}
