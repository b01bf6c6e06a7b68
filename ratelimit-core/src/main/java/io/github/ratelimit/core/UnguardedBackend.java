package io.github.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.publisher.Mono;

/**
 * The backend as the last layer of an unguarded limiter: its answers as decisions, its failures passed to the caller.
 * A caller that gives up before the answer (a cancel, the other part of a shadow split failing) gets nothing, so what
 * the call takes is given back.
 */
final class UnguardedBackend implements Decider {

	private final RateLimitBackend backend;

	private final ErrorCounts errors;

	private final Acquired.PermitsInFlight inFlight;

	UnguardedBackend(RateLimitBackend backend, ErrorCounts errors, Acquired.PermitsInFlight inFlight) {
		this.backend = backend;
		this.errors = errors;
		this.inFlight = inFlight;
	}

	@Override
	public Mono<RateLimitDecision> decide(RateLimitRequest request) {
		return Mono.defer(() -> {
			String requestId = RequestIds.next();
			CompletableFuture<RateLimitBackend.Acquisition> answer = this.backend.acquire(request, requestId).toFuture();
			AtomicBoolean seen = new AtomicBoolean();
			return Mono.fromFuture(answer, true).map((acquisition) -> {
				seen.set(true);
				return decision(request, requestId, acquisition);
			}).doOnCancel(() -> {
				if (seen.compareAndSet(false, true)) {
					Acquired.undo(this.backend, request, requestId, answer, this.errors);
				}
			});
		});
	}

	private RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition) {
		this.errors.add(BackendErrorKind.GIVE_BACK_FAILED, acquisition.failedGiveBacks());
		return Acquired.decision(request, requestId, acquisition, this.backend, null, this.inFlight);
	}

}
