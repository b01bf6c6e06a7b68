package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Decides a request the backend could not decide, by its policies' failure modes: open entries are admitted
 * unchecked, closed entries refused, local entries evaluated together on the fallback backend (atomically, as one
 * request; what they took is given back when a closed entry refuses).
 */
record FailureModes(RateLimitBackend fallback, Duration closedRetryAfter, Acquired.PermitsInFlight inFlight) {

	/** The failure modes' decision, at once unless the fallback decides on another thread. */
	Mono<RateLimitDecision> decide(RateLimitRequest request, String requestId, Throwable failure) {
		List<RateLimitRequest.Entry> entries = request.entries();
		PolicyDecision[] decisions = new PolicyDecision[entries.size()];
		List<Integer> localIndexes = new ArrayList<>();
		boolean refused = false;
		for (int i = 0; i < entries.size(); i++) {
			RateLimitRequest.Entry entry = entries.get(i);
			switch (entry.policy().failureMode()) {
				case OPEN -> decisions[i] = PolicyDecision.failedOpen(entry);
				case CLOSED -> {
					decisions[i] = PolicyDecision.failedClosed(entry, this.closedRetryAfter);
					refused = true;
				}
				case LOCAL -> localIndexes.add(i);
			}
		}
		RateLimitRequest local = localPart(request);
		if (local == null) {
			List<PolicyDecision> all = List.of(decisions);
			return Mono.just(RateLimitDecision.withoutPermits(all, failure));
		}
		boolean closedRefuses = refused;
		return this.fallback.acquire(local, requestId).flatMap((acquisition) -> {
			for (int j = 0; j < localIndexes.size(); j++) {
				decisions[localIndexes.get(j)] = acquisition.decisions().get(j).asLocalFallback();
			}
			// a closed policy refuses: what the local entries took goes back, and they report it given back
			boolean givesBack = closedRefuses && acquisition.decisions().stream().allMatch(PolicyDecision::allowed);
			List<PolicyDecision> all = givesBack ? Acquired.reversed(entries, List.of(decisions)) : List.of(decisions);
			RateLimitDecision decided = Acquired.decision(entries, all, this.fallback, null, local.entries(),
					requestId, acquisition, failure, this.inFlight);
			if (!givesBack) {
				return Mono.just(decided);
			}
			List<Long> times = acquisition.entryTimesMicros();
			List<Long> sequences = acquisition.entrySequences();
			return this.fallback.release(local.entries(), requestId, times, sequences).thenReturn(decided);
		});
	}

	/** The entries of policies that fail to {@code local}, or null when there are none (most requests). */
	static @Nullable RateLimitRequest localPart(RateLimitRequest request) {
		return request.part((entry) -> entry.policy().failureMode() == FailureMode.LOCAL);
	}

}
