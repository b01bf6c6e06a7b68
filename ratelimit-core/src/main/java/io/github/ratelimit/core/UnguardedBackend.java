package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The backend as the last layer of an unguarded limiter: its answers as decisions, its failures passed to the caller.
 */
record UnguardedBackend(RateLimitBackend backend, ErrorCounts errors, Acquired.PermitsInFlight inFlight)
		implements Decider {

	@Override
	public Mono<RateLimitDecision> decide(RateLimitRequest request) {
		return Mono.defer(() -> {
			String requestId = RequestIds.next();
			return this.backend.acquire(request, requestId)
				.map((acquisition) -> decision(request, requestId, acquisition));
		});
	}

	@Override
	public @Nullable RateLimitDecision decideAtOnce(RateLimitRequest request) {
		String requestId = RequestIds.next();
		RateLimitBackend.Acquisition acquisition = this.backend.acquireAtOnce(request, requestId);
		return (acquisition != null) ? decision(request, requestId, acquisition) : null;
	}

	private RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition) {
		return Acquired.decision(request, requestId, acquisition, this.backend, null, this.inFlight, this.errors);
	}

}
