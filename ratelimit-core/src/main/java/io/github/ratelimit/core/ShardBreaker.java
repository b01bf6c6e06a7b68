package io.github.ratelimit.core;

import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The circuit breaker of one shard (or of the whole backend), calls going through Resilience4j's
 * {@link CircuitBreaker#decorateCompletionStage decorator} (architecture.md, "Breaker accounting"). Without a breaker
 * every call is made.
 */
record ShardBreaker(@Nullable CircuitBreaker breaker) {

	/** The limiter's category: what the guard logs is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	/**
	 * Makes the call (never throwing) when the breaker permits it; the breaker records how the stage it returns
	 * completes, with its duration. Without a breaker, makes it.
	 * @throws RuntimeException when the breaker fails (it never should)
	 */
	<T> void call(Supplier<CompletionStage<T>> call) {
		if (this.breaker != null) {
			this.breaker.decorateCompletionStage(call).get();
		}
		else {
			call.get();
		}
	}

	/** Why a call the breaker did not make was not made. */
	CallNotPermittedException refusal() {
		return CallNotPermittedException.createCallNotPermittedException(Objects.requireNonNull(this.breaker));
	}

	/** Forgets a call that was made: its outcome is not recorded. */
	void releasePermission() {
		if (this.breaker != null) {
			try {
				this.breaker.releasePermission();
			}
			catch (RuntimeException ex) {
				logger.debug("Circuit breaker failed to release a permission", ex);
			}
		}
	}

	/** Whether calls are kept away from this shard: its circuit is open. */
	boolean circuitOpen() {
		return this.breaker != null && isOpen(this.breaker.getState());
	}

	/** Whether decisions of this shard's entries are degraded: its circuit is open or probing. */
	boolean degraded() {
		return this.breaker != null
				&& (isOpen(this.breaker.getState()) || this.breaker.getState() == CircuitBreaker.State.HALF_OPEN);
	}

	private static boolean isOpen(CircuitBreaker.State state) {
		return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
	}

}
