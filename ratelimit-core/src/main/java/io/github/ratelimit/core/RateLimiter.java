package io.github.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Evaluates all the policies of a request in one call. A limiter that wraps another passes on
 * {@link #checkAtOnce(RateLimitRequest)}, {@link #checkAtOnce(RateLimitRequest, ContextView)} and
 * {@link #checkAsyncAfterAtOnce} together with {@link #checkAsync}, or none of the three (then every decision goes
 * through its {@code checkAsync}, which may still be made at once by the limiter it wraps).
 */
public interface RateLimiter {

	/**
	 * {@return the decision of the request's policies and identities, emitted once the backend answers, without
	 * blocking a thread} Release its {@link RateLimitDecision#permit() permit} when the request completes.
	 */
	Mono<RateLimitDecision> checkAsync(RateLimitRequest request);

	/**
	 * {@return the decision: {@link #checkAtOnce} when it answers, else the calling thread waiting for
	 * {@link #checkAsyncAfterAtOnce}} That is the backend round trip, at most a guarded limiter's time budget.
	 * Release its {@link RateLimitDecision#permit() permit} when it completes.
	 */
	default RateLimitDecision check(RateLimitRequest request) {
		RateLimitDecision now = checkAtOnce(request);
		return (now != null) ? now : Objects.requireNonNull(Waits.await(checkAsyncAfterAtOnce(request)));
	}

	/**
	 * {@return the decision, made on the calling thread, when this limiter can make it without waiting for anyone (a
	 * leased slice's spend); else null, having taken nothing: then {@link #checkAsyncAfterAtOnce}} Release its
	 * {@link RateLimitDecision#permit() permit} when the request completes.
	 */
	default @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request) {
		return null;
	}

	/**
	 * {@return {@link #checkAtOnce(RateLimitRequest)} for a reactive caller, which passes its subscriber's Reactor
	 * context: the decision observed under that context's observation, not the thread's} Null by default: the caller
	 * then goes through {@link #checkAsyncAfterAtOnce}, by default {@link #checkAsync}, which may decide at once
	 * itself (a limiter that wraps another one and passes none of the at-once methods on keeps its reactive callers'
	 * observations whole).
	 */
	default @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request, ContextView context) {
		return null;
	}

	/**
	 * {@return {@link #checkAsync} for a caller that has just asked {@link #checkAtOnce} (either form) and got null:
	 * the same decision, without asking at once again} By default {@code checkAsync} itself.
	 */
	default Mono<RateLimitDecision> checkAsyncAfterAtOnce(RateLimitRequest request) {
		return checkAsync(request);
	}

}
