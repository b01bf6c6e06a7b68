package io.github.ratelimit.core;

import reactor.core.publisher.Mono;

/** Evaluates all the policies of a request in one call. */
public interface RateLimiter {

	/**
	 * Evaluates the request, blocking the calling thread for the backend round trip.
	 * @param request the policies and identities of the request
	 * @return the decision; release its {@link RateLimitDecision#permit() permit} when the request completes
	 */
	RateLimitDecision check(RateLimitRequest request);

	/**
	 * Evaluates the request without blocking a thread.
	 * @param request the policies and identities of the request
	 * @return the decision, emitted once the backend answers
	 */
	Mono<RateLimitDecision> checkAsync(RateLimitRequest request);

}
