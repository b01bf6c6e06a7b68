package io.github.ratelimit.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What a backend took for a request, as the decision the caller gets: the permits that give it back (the concurrency
 * permits held until the request completes, and the reversal of everything), and the figures once given back.
 */
final class Acquired {

	/** The limiter's category: what its layers log is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	private Acquired() {
	}

	/**
	 * The decision of a backend's answer to a whole request, its failed give-backs counted; releases go through the
	 * guard, when there is one.
	 */
	static RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition, RateLimitBackend backend, @Nullable Guard guard,
			PermitsInFlight inFlight, ErrorCounts errors) {
		errors.add(BackendErrorKind.GIVE_BACK_FAILED, acquisition.failedGiveBacks());
		return decision(request.entries(), acquisition.decisions(), backend, guard, request.entries(), requestId,
				acquisition, null, inFlight);
	}

	/**
	 * A decision whose permits give back what a backend ({@code source}) took for some of the request's entries
	 * ({@code taken}, as its answer {@code acquired} says) when the request is admitted; {@code failure} says why the
	 * failure modes decided, when they did.
	 */
	static RateLimitDecision decision(List<RateLimitRequest.Entry> entries, List<PolicyDecision> decisions,
			RateLimitBackend source, @Nullable Guard guard, List<RateLimitRequest.Entry> taken, String requestId,
			RateLimitBackend.Acquisition acquired, @Nullable Throwable failure, PermitsInFlight inFlight) {
		for (PolicyDecision decision : decisions) {
			if (!decision.allowed()) {
				return RateLimitDecision.withoutPermits(decisions, failure);
			}
		}
		List<Long> times = acquired.entryTimesMicros();
		List<Long> sequences = acquired.entrySequences();
		List<RateLimitRequest.Entry> held = new ArrayList<>();
		List<Long> heldSince = new ArrayList<>();
		List<Long> heldSequences = new ArrayList<>();
		for (int i = 0; i < taken.size(); i++) {
			if (taken.get(i).policy().algorithm().holdsPermits()) {
				held.add(taken.get(i));
				heldSince.add(times.get(i));
				heldSequences.add(sequences.get(i));
			}
		}
		Permit permit = held.isEmpty() ? Permit.NONE
				: new BackendPermit(source, guard, held, requestId, heldSince, heldSequences, inFlight,
					new AtomicBoolean());
		Permit reversal = new BackendPermit(source, guard, taken, requestId, times, sequences, null,
				new AtomicBoolean());
		return new RateLimitDecision(decisions, permit, reversal, () -> reversed(entries, decisions), failure);
	}

	/** The decisions of admitted entries with each counted entry's cost given back. */
	static List<PolicyDecision> reversed(List<RateLimitRequest.Entry> entries, List<PolicyDecision> decisions) {
		List<PolicyDecision> reversed = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			PolicyDecision decision = decisions.get(i);
			if (!decision.allowed() || !decision.enforcement().hasFigures()) {
				reversed.add(decision);
				continue;
			}
			long cost = entries.get(i).cost();
			long remaining = Math.min(decision.policy().capacity(), decision.remaining() + cost);
			reversed.add(new PolicyDecision(decision.policy(), decision.identity(), true, remaining,
					resetAfterGivingBack(decision, cost, remaining), decision.retryAfter(), decision.enforcement()));
		}
		return reversed;
	}

	/**
	 * The time until a policy is full once a cost is given back: zero when full; for token bucket and GCRA the cost's
	 * refill time less; for the others the time as it was (their quota comes back as entries or windows expire).
	 */
	private static Duration resetAfterGivingBack(PolicyDecision decision, long cost, long remaining) {
		RateLimitPolicy policy = decision.policy();
		if (remaining >= policy.capacity()) {
			return Duration.ZERO;
		}
		if (policy.algorithm() == Algorithm.TOKEN_BUCKET || policy.algorithm() == Algorithm.GCRA) {
			Duration refill = Duration.of(Math.multiplyExact(policy.windowMicros(), cost) / policy.limit(),
					ChronoUnit.MICROS);
			Duration reset = decision.resetAfter().minus(refill);
			return reset.isNegative() ? Duration.ZERO : reset;
		}
		return decision.resetAfter();
	}

	/** Whether every policy admitted, shadow ones included (a part of shadow policies only is always "allowed"). */
	static boolean admitsAll(RateLimitDecision decision) {
		for (PolicyDecision policy : decision.allDecisions()) {
			if (!policy.allowed()) {
				return false;
			}
		}
		return true; // a loop, not a stream: asked on every decision
	}

	/**
	 * Gives back all a decision the caller will not get holds, its permit too (counted as held until released),
	 * without waiting; a failure is counted.
	 */
	static void giveBackAll(RateLimitDecision decision, ErrorCounts errors) {
		Permit all = PermitPair.of(decision.reversal(), decision.permit());
		if (all.holdsAny()) {
			all.releaseAsync().subscribe(null, (ex) -> {
				errors.add(BackendErrorKind.GIVE_BACK_FAILED);
				logger.debug("Could not give back what a part of a denied request took", ex);
			});
		}
	}

	/**
	 * What a backend took for some entries of a request, given back once by its release; counted in {@code inFlight}
	 * while held, unless that is null (a reversal).
	 */
	private record BackendPermit(RateLimitBackend backend, @Nullable Guard guard, List<RateLimitRequest.Entry> entries,
			String requestId, List<Long> acquiredAtMicros, List<Long> sequences, @Nullable PermitsInFlight inFlight,
			AtomicBoolean released) implements Permit {

		BackendPermit {
			if (inFlight != null) {
				inFlight.add(entries, 1);
			}
		}

		/** Counts the permits as released: once, when this permit is released for good. */
		private void countReleased() {
			if (this.inFlight != null) {
				this.inFlight.add(this.entries, -1);
			}
		}

		private Mono<Void> backendRelease() {
			return this.backend.release(this.entries, this.requestId, this.acquiredAtMicros, this.sequences);
		}

		/** Releases once; unguarded, a release that fails can be tried again. */
		@Override
		public Mono<Void> releaseAsync() {
			return Mono.defer(() -> {
				if (!this.released.compareAndSet(false, true)) {
					return Mono.empty();
				}
				if (this.guard != null) {
					countReleased();
					return this.guard.release(this.entries, backendRelease());
				}
				return backendRelease().doOnSuccess((done) -> countReleased())
					.doOnError((ex) -> this.released.set(false));
			});
		}

		@Override
		public boolean holdsAny() {
			return !this.released.get();
		}

	}

	/** The concurrency permits held, by policy name, in units of cost. */
	static final class PermitsInFlight {

		private final ConcurrentHashMap<String, AtomicLong> held = new ConcurrentHashMap<>();

		void add(List<RateLimitRequest.Entry> entries, int sign) {
			for (RateLimitRequest.Entry entry : entries) {
				if (entry.policy().algorithm().holdsPermits()) {
					this.held.computeIfAbsent(entry.policy().name(), (name) -> new AtomicLong())
						.addAndGet(sign * (long) entry.cost());
				}
			}
		}

		long get(String policy) {
			AtomicLong count = this.held.get(policy);
			return (count != null) ? count.get() : 0;
		}

	}

}
