package io.github.ratelimit.core;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The permits of a decision that lands after the request was decided, held by the request beside its own: a backend's
 * answer that came after the time budget, for a request the failure modes admitted, or the fallback's mirror of an
 * admission (see {@code DefaultRateLimiter}). The request is served, so what the answer took stays counted; its
 * concurrency permits go back with the request's, and a reversal of the request gives everything back, whether the
 * answer is in by then or lands later.
 */
final class PendingPermits {

	private static final Log logger = LogFactory.getLog(PendingPermits.class);

	private final Deferred permit;

	private final Deferred reversal = new Deferred(true);

	PendingPermits(RateLimitRequest request) {
		this.permit = new Deferred(
				request.entries().stream().anyMatch((entry) -> entry.policy().algorithm().holdsPermits()));
	}

	/**
	 * The answer is in.
	 * @param answer the backend's decision with its permits, or null when the call failed
	 */
	void land(@Nullable RateLimitDecision answer) {
		this.permit.land((answer != null) ? answer.permit() : Permit.NONE);
		this.reversal.land((answer != null) ? answer.reversal() : Permit.NONE);
	}

	/**
	 * A decision holding this answer's permits beside its own.
	 * @param decided the decision made without this answer, an admission
	 * @return the decision the caller gets
	 */
	RateLimitDecision joinedTo(RateLimitDecision decided) {
		return new RateLimitDecision(decided.allDecisions(), PermitPair.of(decided.permit(), this.permit),
				PermitPair.of(decided.reversal(), this.reversal), () -> decided.reversed().allDecisions(),
				decided.failure().orElse(null));
	}

	/** A permit of an answer that may not be in yet: released as it lands when it was released before. */
	private static final class Deferred implements Permit {

		/** Whether the answer may hold something to release. */
		private final boolean mayHold;

		private @Nullable Permit landed;

		private boolean released;

		Deferred(boolean mayHold) {
			this.mayHold = mayHold;
		}

		void land(Permit permit) {
			synchronized (this) {
				if (!this.released) {
					this.landed = permit;
					return;
				}
			}
			permit.releaseAsync()
				.subscribe(null, (ex) -> logger.debug("Could not give back what a pending rate-limit answer took", ex));
		}

		/** The permit to release now, or null when there is none yet (it is released as it lands). */
		private synchronized @Nullable Permit markReleased() {
			if (this.released) {
				return null;
			}
			this.released = true;
			return this.landed;
		}

		@Override
		public Mono<Void> releaseAsync() {
			return Mono.defer(() -> {
				Permit permit = markReleased();
				return (permit != null) ? permit.releaseAsync() : Mono.empty();
			});
		}

		@Override
		public synchronized boolean holdsAny() {
			if (this.released) {
				return false;
			}
			return (this.landed != null) ? this.landed.holdsAny() : this.mayHold;
		}

	}

}
