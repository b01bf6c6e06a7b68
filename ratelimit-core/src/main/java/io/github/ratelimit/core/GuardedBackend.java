package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The backend as the last layer of a guarded limiter (architecture.md, "When Redis fails"): when it fails, is late or
 * its circuit is open, the policies' failure modes decide. A request spanning shards is split ({@link ShardSplit}).
 */
record GuardedBackend(RateLimitBackend backend, Guard guard, FailureModes failureModes,
		Acquired.PermitsInFlight inFlight) implements Decider {

	/** The limiter's category: what the guard logs is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	/** Where the fallback's mirrored permits are counted: nowhere read (the backend's permits are the ones held). */
	private static final Acquired.PermitsInFlight MIRRORED = new Acquired.PermitsInFlight();

	@Override
	public Mono<RateLimitDecision> decide(RateLimitRequest request) {
		ShardSplit split = this.guard.split(request);
		return (split != null) ? split.decide(this::decidePart, this.guard.errors) : decidePart(request);
	}

	/**
	 * A request of one shard whose circuit is closed and whose backend answers at once: no budget or breaker call
	 * (nothing waits), a healthy decision among the guard's recent ones, an admission mirrored as any other. While
	 * the circuit is open or probing, the guarded call decides, as for any request (architecture.md, "Answers made
	 * at once").
	 */
	@Override
	public @Nullable RateLimitDecision decideAtOnce(RateLimitRequest request) {
		if (this.guard.split(request) != null || this.guard.breaker(request.entries()).degraded()) {
			return null;
		}
		String requestId = RequestIds.next();
		RateLimitBackend.Acquisition acquisition;
		try {
			acquisition = this.backend.acquireAtOnce(request, requestId);
		}
		catch (RuntimeException ex) {
			// a backend's failure, counted as one; the guarded call then decides (by the failure modes if it fails)
			this.guard.failed(BackendErrorKind.BACKEND_ERROR, ex);
			return null;
		}
		if (acquisition == null) {
			return null;
		}
		this.guard.decided();
		return mirrored(request, requestId, decision(request, requestId, acquisition));
	}

	private RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition) {
		return Acquired.decision(request, requestId, acquisition, this.backend, this.guard, this.inFlight,
				this.guard.errors);
	}

	/**
	 * An admission the backend made, taken from the fallback too for the policies that fail to {@code local}
	 * (architecture.md, "The local fallback mirrors"); the fallback's answer does not change the decision.
	 */
	private RateLimitDecision mirrored(RateLimitRequest request, String requestId, RateLimitDecision decision) {
		RateLimitRequest local = Acquired.admitsAll(decision) ? FailureModes.localPart(request) : null;
		if (local == null) {
			return decision;
		}
		RateLimitBackend fallback = this.failureModes.fallback();
		PendingPermits mirror = new PendingPermits(local);
		fallback.acquire(local, requestId)
			.subscribe((acquisition) -> mirror.land(Acquired.decision(local, requestId, acquisition, fallback, null,
					MIRRORED, this.guard.errors)), (ex) -> mirror.land(null));
		return mirror.joinedTo(decision);
	}

	/** Decides a request of one shard: the rest of the budget is a timer. */
	private Mono<RateLimitDecision> decidePart(RateLimitRequest part) {
		return Mono.defer(() -> {
			Call call = new Call(part);
			if (call.answer == null) {
				return call.refused();
			}
			// the backend call runs on whatever its own subscription needs; cancelling this one never cancels it
			Mono<RateLimitBackend.Acquisition> answer = Mono.fromFuture(call.answer, true);
			// a call answered while it was sent (a leased slice's spend) needs no budget timer: arming and cancelling
			// one costs a scheduler task and a woken thread
			if (this.guard.timeout != null && !call.answer.isDone()) {
				// with a fallback: without one, Reactor names the step for the timeout's message on every subscription
				answer = answer.timeout(Duration.ofNanos(call.remainingNanos()), Mono.error(BudgetSpent::new));
			}
			return answer.map(call::answered)
				.onErrorResume((ex) -> (ex instanceof BudgetSpent) ? call.timedOut() : call.failed(ex))
				.doOnCancel(call::cancelled);
		});
	}

	/**
	 * One backend call under its shard's breaker, settled once: by the answer, or by the failure modes (a late answer
	 * is then kept for an admitted request, given back for a refused one). The breaker hears of it as
	 * architecture.md, "Breaker accounting", says.
	 */
	private final class Call {

		private static final int PENDING = 0;

		private static final int SETTLED = 1;

		private static final int CANCELLED = 2;

		private final RateLimitRequest request;

		private final String requestId = RequestIds.next();

		/** The budget counts from before the call is dispatched: what dispatching takes is spent already. */
		private final long start = System.nanoTime();

		/** What the breaker hears of the call: the answer, unless the caller gave up before the call settled. */
		private final CompletableFuture<RateLimitBackend.Acquisition> accounted = new CompletableFuture<>();

		/** Whether the breaker hears of the call ({@code SETTLED}) or forgets it ({@code CANCELLED}). */
		private final AtomicInteger state = new AtomicInteger(PENDING);

		/** Whether the request was decided (by the answer or the failure modes): a later cancel changes nothing. */
		private final AtomicBoolean decided = new AtomicBoolean();

		private final ShardBreaker breaker;

		/** The backend's answer, or null when the call was not made. */
		private @Nullable CompletableFuture<RateLimitBackend.Acquisition> answer;

		/** Why the call was not made: the breaker refused it, or it failed to start. */
		private @Nullable Throwable refusal;

		Call(RateLimitRequest request) {
			this.request = request;
			this.breaker = GuardedBackend.this.guard.breaker(request.entries());
			try {
				this.breaker.call(this::send);
			}
			catch (RuntimeException ex) {
				// nothing a failing breaker throws changes a decision: the call is made, the budget bounds it
				logger.debug("Circuit breaker failed", ex);
				if (this.answer == null && this.refusal == null) {
					send();
				}
			}
			if (this.answer == null && this.refusal == null) {
				this.refusal = this.breaker.refusal();
			}
		}

		private CompletionStage<RateLimitBackend.Acquisition> send() {
			try {
				CompletableFuture<RateLimitBackend.Acquisition> acquired = GuardedBackend.this.backend
					.acquire(this.request, this.requestId)
					.toFuture();
				// the decision waits for the breaker to hear of the answer: a caller's next request, sent as this
				// decision arrives, must find the half-open breaker's permitted call recorded, not still taken
				this.answer = (acquired.isDone() && !acquired.isCompletedExceptionally())
						? answeredFromMemory(acquired.join()) : acquired.whenComplete(this::account);
				return this.accounted;
			}
			catch (RuntimeException ex) {
				this.refusal = ex;
				return CompletableFuture.failedFuture(ex);
			}
		}

		private void account(RateLimitBackend.@Nullable Acquisition acquisition, @Nullable Throwable failure) {
			this.state.compareAndSet(PENDING, SETTLED);
			if (this.state.get() == SETTLED) {
				if (failure == null) {
					this.accounted.complete(acquisition);
				}
				else {
					this.accounted.completeExceptionally(failure);
				}
			}
		}

		/**
		 * An answer made while the call was sent came from the backend's memory (a leased slice's spend), which says
		 * nothing of Redis: a closed breaker forgets the call (else such answers would hide Redis' failures among
		 * successes); a probing one hears how a probe of Redis fares instead (else leased requests alone would close
		 * it while Redis is down), and the answer goes on once it has (the budget's timer runs meanwhile).
		 */
		private CompletableFuture<RateLimitBackend.Acquisition> answeredFromMemory(
				RateLimitBackend.Acquisition acquisition) {
			if (!this.breaker.degraded()) {
				forget();
				return CompletableFuture.completedFuture(acquisition);
			}
			// deferred: a probe that throws is a failed probe
			Mono<Void> probe = Mono.defer(() -> GuardedBackend.this.backend.probe(this.request));
			Duration timeout = GuardedBackend.this.guard.timeout;
			if (timeout != null) {
				// as long as a call's timeout takes to reach the breaker (timedOut)
				probe = probe.timeout(Duration.ofNanos(remainingNanos() + timeout.toNanos()));
			}
			return probe.toFuture().handle((ignored, failure) -> {
				account((failure == null) ? acquisition : null, failure);
				return acquisition;
			});
		}

		long remainingNanos() {
			return GuardedBackend.this.guard.remainingNanos(this.start);
		}

		/** The request is decided: a cancel changes nothing now, and the breaker hears of the call. */
		private void settle() {
			this.decided.set(true);
			this.state.compareAndSet(PENDING, SETTLED);
		}

		/** The breaker forgets the call, unless it has heard of it already. */
		private void forget() {
			if (this.state.compareAndSet(PENDING, CANCELLED)) {
				this.breaker.releasePermission();
			}
		}

		/** The decision of an answer within the budget: the backend's, an admission mirrored by the fallback. */
		RateLimitDecision answered(RateLimitBackend.Acquisition acquisition) {
			settle();
			GuardedBackend.this.guard.decided();
			return mirrored(decision(acquisition));
		}

		/** The failure modes' decision of a call that was not made. */
		Mono<RateLimitDecision> refused() {
			Throwable refusal = Objects.requireNonNull(this.refusal);
			if (!(refusal instanceof CallNotPermittedException)) {
				return failed(refusal);
			}
			GuardedBackend.this.guard.notPermitted();
			return failureModes(refusal);
		}

		Mono<RateLimitDecision> failed(Throwable failure) {
			settle();
			GuardedBackend.this.guard.failed(BackendErrorKind.BACKEND_ERROR, failure);
			return failureModes(failure);
		}

		/**
		 * The failure modes' decision of a call that did not answer within the budget. The breaker hears of it one
		 * budget later, so that a client stall (a GC pause) does not open it on a healthy Redis.
		 */
		Mono<RateLimitDecision> timedOut() {
			TimeoutException timeout = GuardedBackend.this.guard.timeoutException();
			GuardedBackend.this.guard.failed(BackendErrorKind.TIMEOUT, timeout);
			settle();
			// Reactor's timer, left to fire: the JDK's orTimeout would cancel its timer under a lock on the answering
			// thread (an event loop)
			long budget = Objects.requireNonNull(GuardedBackend.this.guard.timeout).toNanos();
			Schedulers.parallel().schedule(() -> {
				if (this.state.get() == SETTLED) {
					this.accounted.completeExceptionally(timeout);
				}
			}, budget, TimeUnit.NANOSECONDS);
			return late(Mono.defer(() -> failureModes(timeout)));
		}

		/** The caller gave up before the request was decided: the call is given back, and the breaker forgets it. */
		void cancelled() {
			if (this.decided.compareAndSet(false, true)) {
				forget();
				undo();
			}
		}

		private Mono<RateLimitDecision> failureModes(Throwable failure) {
			return GuardedBackend.this.failureModes.decide(this.request, this.requestId, failure);
		}

		/** A decision made while the call still runs: what it takes is kept or given back once (decision or cancel). */
		private Mono<RateLimitDecision> late(Mono<RateLimitDecision> decided) {
			AtomicBoolean handled = new AtomicBoolean();
			Mono<RateLimitDecision> late = decided
				.map((decision) -> handled.compareAndSet(false, true) ? keptWhenLate(decision) : decision);
			// the timeout fired on a timer thread: the rest goes on where waiting is allowed, not on a shared timer;
			// the cancel hook below it, so that a cancel before that worker ran still gives back
			return late.subscribeOn(Schedulers.boundedElastic()).doOnCancel(() -> {
				if (handled.compareAndSet(false, true)) {
					undo();
				}
			});
		}

		/** An admitted request is served: its late permits join it ({@link PendingPermits}); a refusal gives back. */
		private RateLimitDecision keptWhenLate(RateLimitDecision decided) {
			CompletableFuture<RateLimitBackend.Acquisition> call = Objects.requireNonNull(this.answer);
			if (!Acquired.admitsAll(decided)) {
				undo();
				return decided;
			}
			PendingPermits late = new PendingPermits(this.request);
			call.whenComplete((acquisition, failure) -> late.land((acquisition != null) ? decision(acquisition) : null));
			return late.joinedTo(decided);
		}

		/** Gives back what the call takes once it answers (else a concurrency permit is held until its lease ends). */
		private void undo() {
			ErrorCounts errors = GuardedBackend.this.guard.errors;
			Objects.requireNonNull(this.answer).whenComplete((acquisition, failure) -> {
				if (acquisition == null) {
					return;
				}
				errors.add(BackendErrorKind.GIVE_BACK_FAILED, acquisition.failedGiveBacks());
				if (acquisition.decisions().stream().allMatch(PolicyDecision::allowed)) {
					GuardedBackend.this.backend
						.release(this.request.entries(), this.requestId, acquisition.entryTimesMicros(),
								acquisition.entrySequences())
						.subscribe(null, (ex) -> {
							errors.add(BackendErrorKind.GIVE_BACK_FAILED);
							logger.debug("Could not give back a late rate-limit acquisition", ex);
						});
				}
			});
		}

		private RateLimitDecision decision(RateLimitBackend.Acquisition acquisition) {
			return GuardedBackend.this.decision(this.request, this.requestId, acquisition);
		}

		private RateLimitDecision mirrored(RateLimitDecision decision) {
			return GuardedBackend.this.mirrored(this.request, this.requestId, decision);
		}

	}

	/** The time budget ran out: a signal of the guard's own, never confused with a backend's timeout. */
	private static final class BudgetSpent extends RuntimeException {

		BudgetSpent() {
			super(null, null, false, false);
		}

	}

}
