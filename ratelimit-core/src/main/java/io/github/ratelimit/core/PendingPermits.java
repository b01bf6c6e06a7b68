package io.github.ratelimit.core;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The permits of an answer that lands after the request was decided (a late backend answer to a request the failure
 * modes admitted, or the fallback's mirror), held beside the request's own: released with them, as it lands if later.
 */
final class PendingPermits {

	private static final Log logger = LogFactory.getLog(PendingPermits.class);

	private final Deferred permit;

	private final Deferred reversal = new Deferred(true);

	PendingPermits(RateLimitRequest request) {
		this.permit = new Deferred(
				request.entries().stream().anyMatch((entry) -> entry.policy().algorithm().holdsPermits()));
	}

	/** The answer is in: its decision with its permits, or null when the call failed. */
	void land(@Nullable RateLimitDecision answer) {
		this.permit.land((answer != null) ? answer.permit() : Permit.NONE);
		this.reversal.land((answer != null) ? answer.reversal() : Permit.NONE);
	}

	/** {@return the admission made without this answer, holding this answer's permits too} */
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
