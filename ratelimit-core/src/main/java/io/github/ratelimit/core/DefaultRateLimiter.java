package io.github.ratelimit.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.publisher.Mono;

/**
 * The {@link RateLimiter} over one {@link RateLimitBackend}: evaluates a request's entries together and hands out the
 * concurrency permits of an admitted request.
 */
public final class DefaultRateLimiter implements RateLimiter {

	private final RateLimitBackend backend;

	public DefaultRateLimiter(RateLimitBackend backend) {
		this.backend = backend;
		RequestIds.initialize();
	}

	@Override
	public RateLimitDecision check(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return new RateLimitDecision(List.of(), Permit.NONE);
		}
		String requestId = RequestIds.next();
		return decision(request, requestId, this.backend.acquire(request, requestId));
	}

	@Override
	public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return Mono.just(new RateLimitDecision(List.of(), Permit.NONE));
		}
		return Mono.defer(() -> {
			String requestId = RequestIds.next();
			return this.backend.acquireAsync(request, requestId)
				.map((decisions) -> decision(request, requestId, decisions));
		});
	}

	private RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition) {
		List<PolicyDecision> decisions = acquisition.decisions();
		if (!decisions.stream().allMatch(PolicyDecision::allowed)) {
			return new RateLimitDecision(decisions, Permit.NONE);
		}
		List<RateLimitRequest.Entry> held = request.entries()
			.stream()
			.filter((entry) -> entry.policy().algorithm() == Algorithm.CONCURRENCY)
			.toList();
		Permit permit = held.isEmpty() ? Permit.NONE
				: new BackendPermit(this.backend, held, requestId, acquisition.timeMicros());
		Permit reversal = new BackendPermit(this.backend, request.entries(), requestId, acquisition.timeMicros());
		return new RateLimitDecision(decisions, permit, reversal, () -> reversed(request.entries(), decisions));
	}

	/** The decisions with each entry's cost given back. */
	private static List<PolicyDecision> reversed(List<RateLimitRequest.Entry> entries, List<PolicyDecision> decisions) {
		List<PolicyDecision> reversed = new java.util.ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			PolicyDecision decision = decisions.get(i);
			long remaining = Math.min(entries.get(i).policy().capacity(), decision.remaining() + entries.get(i).cost());
			reversed.add(new PolicyDecision(decision.policy(), decision.identity(), true, remaining,
					decision.resetAfter(), decision.retryAfter()));
		}
		return reversed;
	}

	private static final class BackendPermit implements Permit {

		private final RateLimitBackend backend;

		private final List<RateLimitRequest.Entry> entries;

		private final String requestId;

		private final long acquiredAtMicros;

		private final AtomicBoolean released = new AtomicBoolean();

		BackendPermit(RateLimitBackend backend, List<RateLimitRequest.Entry> entries, String requestId,
				long acquiredAtMicros) {
			this.backend = backend;
			this.entries = entries;
			this.requestId = requestId;
			this.acquiredAtMicros = acquiredAtMicros;
		}

		/** Releases once; a release that fails can be tried again. */
		@Override
		public void release() {
			if (this.released.compareAndSet(false, true)) {
				try {
					this.backend.release(this.entries, this.requestId, this.acquiredAtMicros);
				}
				catch (RuntimeException ex) {
					this.released.set(false);
					throw ex;
				}
			}
		}

		@Override
		public Mono<Void> releaseAsync() {
			return Mono.defer(() -> this.released.compareAndSet(false, true)
					? this.backend.releaseAsync(this.entries, this.requestId, this.acquiredAtMicros)
						.doOnError((ex) -> this.released.set(false))
					: Mono.empty());
		}

		@Override
		public boolean holdsAny() {
			return !this.released.get();
		}

	}

}
