package io.github.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * The circuit breaker of one shard of a guarded limiter's backend (of the whole backend unless it is sharded), and
 * how its calls are accounted (architecture.md, "Breaker accounting"): every call asks for permission and is
 * recorded as a success or an error with its duration; a call that times out is recorded one more budget later.
 * Without a breaker every call is permitted and only the guard's own counts are kept.
 */
final class ShardBreaker {

	/** The limiter's category: what the guard logs is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	private final @Nullable CircuitBreaker breaker;

	private final Guard guard;

	ShardBreaker(@Nullable CircuitBreaker breaker, Guard guard) {
		this.breaker = breaker;
		this.guard = guard;
	}

	@Nullable CircuitBreaker breaker() {
		return this.breaker;
	}

	/**
	 * Whether the breaker lets a call through. A breaker that fails (it never should) lets it through: the budget
	 * still bounds the call.
	 */
	boolean tryAcquirePermission() {
		if (this.breaker == null) {
			return true;
		}
		try {
			return this.breaker.tryAcquirePermission();
		}
		catch (RuntimeException | Error ex) {
			logger.debug("Circuit breaker failed to grant a permission", ex);
			return true;
		}
	}

	void releasePermission() {
		CircuitBreaker breaker = this.breaker;
		if (breaker != null) {
			record(breaker::releasePermission);
		}
	}

	/** Tells the breaker something; whatever it throws never changes the decision it is told about. */
	private static void record(Runnable outcome) {
		try {
			outcome.run();
		}
		catch (RuntimeException | Error ex) {
			logger.debug("Circuit breaker failed to record an outcome", ex);
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

	void onSuccess(long startNanos) {
		this.guard.decided();
		CircuitBreaker breaker = this.breaker;
		if (breaker != null) {
			record(() -> breaker.onSuccess(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS));
		}
	}

	void onError(long startNanos, Throwable error) {
		this.guard.failed(BackendErrorKind.BACKEND_ERROR, error);
		CircuitBreaker breaker = this.breaker;
		if (breaker != null) {
			record(() -> breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS, error));
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Rate-limit backend failed; deciding by the policies' failure modes", error);
		}
	}

	/**
	 * A call that did not answer within the budget: the request is decided by the failure modes now, but the
	 * breaker hears of it only once it is clear whether Redis or this client was late. When the client stalls (a
	 * garbage collection, a busy CPU) every call in flight times out at once although Redis answered in time, and
	 * the answers are there as soon as the client runs again; counting those as failures would open the breaker on
	 * a healthy Redis. So a call that answers within one more budget after its timeout is recorded as a success,
	 * with its real duration; one that fails or stays silent is recorded as a failure.
	 */
	void onTimeout(long startNanos, CompletableFuture<?> call, TimeoutException timeout) {
		this.guard.failed(BackendErrorKind.TIMEOUT, timeout);
		CircuitBreaker breaker = this.breaker;
		if (breaker == null || this.guard.timeout == null) {
			return;
		}
		AtomicBoolean recorded = new AtomicBoolean();
		call.whenComplete((answer, failure) -> {
			if (recorded.compareAndSet(false, true)) {
				long duration = System.nanoTime() - startNanos;
				record(() -> {
					if (failure == null) {
						breaker.onSuccess(duration, TimeUnit.NANOSECONDS);
					}
					else {
						breaker.onError(duration, TimeUnit.NANOSECONDS, failure);
					}
				});
			}
		});
		Schedulers.parallel().schedule(() -> {
			if (recorded.compareAndSet(false, true)) {
				record(() -> breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS, timeout));
			}
		}, this.guard.timeout.toNanos(), TimeUnit.NANOSECONDS);
	}

	/** A call not made because the circuit is open: the failure that decides the request. */
	CallNotPermittedException callNotPermitted() {
		this.guard.notPermitted();
		return CallNotPermittedException
			.createCallNotPermittedException(java.util.Objects.requireNonNull(this.breaker));
	}

}
