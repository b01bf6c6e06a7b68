package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The time budget and the circuit breakers (one per shard: {@link ShardBreakers}) of a guarded limiter, how its
 * permits are released, and what it remembers of its recent decisions for health.
 */
final class Guard {

	/** The limiter's category: what the guard logs is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	final @Nullable Duration timeout;

	final ErrorCounts errors;

	private final RateLimitBackend backend;

	private final @Nullable ShardBreakers breakers;

	/** The guard of every call when there is no breaker. */
	private final ShardBreaker unbroken = new ShardBreaker(null);

	private final RecentDecisions recent = new RecentDecisions();

	private volatile @Nullable Throwable lastFailure;

	Guard(RateLimitBackend backend, @Nullable Duration timeout, @Nullable CircuitBreaker breaker, ErrorCounts errors) {
		this.backend = backend;
		this.errors = errors;
		this.timeout = timeout;
		this.breakers = (breaker != null) ? new ShardBreakers(backend, breaker) : null;
	}

	/** The configured breaker, or null. */
	@Nullable CircuitBreaker configuredBreaker() {
		return (this.breakers != null) ? this.breakers.configured() : null;
	}

	/** The registry holding the breakers in use, or null without a breaker. */
	@Nullable CircuitBreakerRegistry registry() {
		return (this.breakers != null) ? this.breakers.registry() : null;
	}

	/** The breaker of the entries' shard: the first one's (a request spanning shards is split before). */
	ShardBreaker breaker(List<RateLimitRequest.Entry> entries) {
		ShardBreakers breakers = this.breakers;
		return (breakers != null) ? breakers.of(this.backend.shard(entries.get(0))) : this.unbroken;
	}

	/** The request (of one kind: enforced or shadow) split by shard when its entries span several; else null. */
	@Nullable ShardSplit split(RateLimitRequest request) {
		List<RateLimitRequest.Entry> entries = request.entries();
		if (this.breakers == null || entries.size() < 2) {
			return null;
		}
		List<@Nullable String> shards = new ArrayList<>(entries.size());
		for (RateLimitRequest.Entry entry : entries) {
			shards.add(this.backend.shard(entry));
		}
		return ShardSplit.of(request, shards);
	}

	/** Nanoseconds left of the budget of a call started then; zero when it is spent. */
	long remainingNanos(long startNanos) {
		return Math.max(0, Objects.requireNonNull(this.timeout).toNanos() - (System.nanoTime() - startNanos));
	}

	TimeoutException timeoutException() {
		return new TimeoutException("The rate-limit backend did not answer within " + millis(this.timeout));
	}

	/** A backend call answered. */
	void decided() {
		this.recent.add(false);
	}

	/** A backend call failed: the failure modes decide. */
	void failed(BackendErrorKind kind, Throwable failure) {
		this.errors.add(kind);
		this.lastFailure = failure;
		this.recent.add(true);
		if (kind == BackendErrorKind.BACKEND_ERROR && logger.isDebugEnabled()) {
			logger.debug("Rate-limit backend failed; deciding by the policies' failure modes", failure);
		}
	}

	/** A backend call was not made, its shard's circuit being open: the failure modes decide. */
	void notPermitted() {
		this.errors.add(BackendErrorKind.CIRCUIT_OPEN);
		this.recent.add(true);
	}

	/** Whether a shard's circuit is open or probing, or the failure modes made one of the last decisions. */
	boolean degraded() {
		return this.recent.byFailureModes() > 0 || (this.breakers != null && this.breakers.degraded());
	}

	/** The last failure of a backend call, while degraded. */
	@Nullable Throwable lastFailure() {
		return degraded() ? this.lastFailure : null;
	}

	/** How many of the last {@value RecentDecisions#SIZE} decisions the failure modes made. */
	int recentFailureModeDecisions() {
		return this.recent.byFailureModes();
	}

	/**
	 * Sends the backend's release of the entries, and completes once it is over or the budget is spent; at once while
	 * their shard's circuit is open (the release lands when the backend is back, else the lease reclaims the permits).
	 */
	Mono<Void> release(List<RateLimitRequest.Entry> entries, Mono<Void> release) {
		return Mono.defer(() -> {
			CompletableFuture<?> call = release.toFuture();
			if (breaker(entries).circuitOpen()) {
				call.whenComplete((done, ex) -> {
					if (ex != null) {
						releaseFailed(ex);
					}
				});
				return Mono.empty();
			}
			Mono<?> answer = Mono.fromFuture(call, true);
			if (this.timeout != null) {
				answer = answer.timeout(this.timeout, Mono.error(TimeoutException::new));
			}
			return answer.onErrorResume((ex) -> {
				releaseFailed(ex);
				return Mono.empty();
			}).then();
		});
	}

	private void releaseFailed(Throwable failure) {
		this.errors.add(BackendErrorKind.RELEASE_FAILED);
		logger.debug("A rate-limit permit release failed or is still pending after " + millis(this.timeout)
				+ "; its lease reclaims what it holds", failure);
	}

	static String millis(@Nullable Duration duration) {
		return (duration != null) ? duration.toMillis() + " ms" : "the backend's own timeout";
	}

	/** The last guarded decisions as a ring: whether the failure modes made each, and how many did (for health). */
	static final class RecentDecisions {

		static final int SIZE = 100;

		private final AtomicIntegerArray byFailureMode = new AtomicIntegerArray(SIZE);

		private final AtomicLong next = new AtomicLong();

		private final AtomicInteger count = new AtomicInteger();

		void add(boolean failureMode) {
			int slot = (int) (this.next.getAndIncrement() % SIZE);
			int value = failureMode ? 1 : 0;
			// written only when it changes, so that a healthy limiter's threads do not contend on the slots
			if (this.byFailureMode.get(slot) != value) {
				this.count.addAndGet(value - this.byFailureMode.getAndSet(slot, value));
			}
		}

		int byFailureModes() {
			return this.count.get();
		}

	}

}
