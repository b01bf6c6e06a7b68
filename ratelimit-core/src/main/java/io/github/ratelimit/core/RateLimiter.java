package io.github.ratelimit.core;

import java.util.Objects;

import reactor.core.publisher.Mono;

/** Evaluates all the policies of a request in one call. */
public interface RateLimiter {

	/**
	 * Evaluates the request without blocking a thread.
	 * @param request the policies and identities of the request
	 * @return the decision, emitted once the backend answers; release its {@link RateLimitDecision#permit() permit}
	 * when the request completes
	 */
	Mono<RateLimitDecision> checkAsync(RateLimitRequest request);

	/**
	 * Evaluates the request, the calling thread waiting for {@link #checkAsync}: as long as the backend round trip,
	 * at most a guarded limiter's time budget.
	 * @param request the policies and identities of the request
	 * @return the decision; release its {@link RateLimitDecision#permit() permit} when the request completes
	 */
	default RateLimitDecision check(RateLimitRequest request) {
		return Objects.requireNonNull(Waits.await(checkAsync(request)));
	}

}
