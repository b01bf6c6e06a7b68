package io.github.ratelimit.core;

import reactor.core.publisher.Mono;

/**
 * A layer between {@link DefaultRateLimiter} and its backend (architecture.md, "The composition"): the backend's
 * acquire, answering with the decision (each entry's {@link Enforcement}, the failure, the permits that give back
 * what was taken) rather than the backend's figures, so that what a layer adds (a failure mode's decision, a late
 * answer's permits, a cached denial) travels back with it. A layer wraps the next; the last asks the backend.
 */
interface Decider {

	/**
	 * Decides a request without blocking: within the time budget when the layers hold one.
	 * @param request the request, its entries all enforced or all shadow
	 * @return the decision
	 */
	Mono<RateLimitDecision> decide(RateLimitRequest request);

}
