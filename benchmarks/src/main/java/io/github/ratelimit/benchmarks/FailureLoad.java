package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import org.jspecify.annotations.Nullable;

/**
 * The load of section 5: decisions on one limiter, the policies taken in turn and the identity at random, blocking
 * from a number of threads in a closed loop, or non-blocking with a number of calls in flight. Offered load is capped
 * at a rate, as an application's request rate is set by its clients and not by how fast the limiter answers: without
 * the cap, decisions made in memory while the circuit breaker is open would spin both cores. Stops by itself after a
 * number of calls, or when stopped.
 */
final class FailureLoad {

	/** Identities per policy. */
	static final int IDENTITIES = 1000;

	/** Receives every call's start and outcome, on whichever thread completes it. */
	interface Sink {

		default void started(long call, long startNanos) {
		}

		/**
		 * A call completed.
		 * @param call the call's sequence number
		 * @param policy the index of its policy
		 * @param startNanos when it started ({@link System#nanoTime()})
		 * @param endNanos when it completed
		 * @param decision the decision, null when the call failed
		 * @param error why the call failed, null when it decided
		 */
		void completed(long call, int policy, long startNanos, long endNanos, @Nullable RateLimitDecision decision,
				@Nullable Throwable error);

	}

	private final RateLimiter limiter;

	private final RateLimitRequest[][] requests;

	private final Sink sink;

	private final boolean blocking;

	private final int concurrency;

	private final long intervalNanos;

	private final long maxCalls;

	private final AtomicBoolean stop = new AtomicBoolean();

	private final AtomicLong calls = new AtomicLong();

	private final List<Thread> threads = new ArrayList<>();

	/**
	 * A load, not started.
	 * @param limiter the limiter
	 * @param policies the policies, taken in turn
	 * @param sink receives the outcomes
	 * @param blocking whether calls block a thread each ({@code concurrency} threads) or not ({@code concurrency}
	 * calls in flight)
	 * @param concurrency threads, or calls in flight
	 * @param ratePerSecond the most calls per second, all threads together; 0 for no cap
	 * @param maxCalls the most calls in all
	 */
	FailureLoad(RateLimiter limiter, List<RateLimitPolicy> policies, Sink sink, boolean blocking, int concurrency,
			double ratePerSecond, long maxCalls) {
		this.limiter = limiter;
		this.sink = sink;
		this.blocking = blocking;
		this.concurrency = concurrency;
		this.maxCalls = maxCalls;
		int issuers = blocking ? concurrency : 1;
		this.intervalNanos = (ratePerSecond > 0) ? (long) (issuers * 1e9 / ratePerSecond) : 0;
		this.requests = new RateLimitRequest[policies.size()][IDENTITIES];
		for (int p = 0; p < policies.size(); p++) {
			for (int i = 0; i < IDENTITIES; i++) {
				this.requests[p][i] = RateLimitRequest.of(policies.get(p), "client-" + i);
			}
		}
	}

	FailureLoad start() {
		if (this.blocking) {
			for (int t = 0; t < this.concurrency; t++) {
				this.threads.add(daemon("failure-load-" + t, this::blockingLoop));
			}
		}
		else {
			this.threads.add(daemon("failure-load-issuer", this::nonBlockingLoop));
		}
		this.threads.forEach(Thread::start);
		return this;
	}

	/**
	 * Stops issuing calls and waits, at most {@code wait}, for the threads to end; a thread stuck in a call that does
	 * not return is left behind (a daemon, ended when its connection closes).
	 * @param wait the longest wait
	 * @return whether every thread ended
	 */
	boolean stop(Duration wait) throws InterruptedException {
		this.stop.set(true);
		long deadline = System.nanoTime() + wait.toNanos();
		boolean ended = true;
		for (Thread thread : this.threads) {
			thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
			ended &= !thread.isAlive();
		}
		return ended;
	}

	/** Calls issued so far. */
	long calls() {
		return this.calls.get();
	}

	private void blockingLoop() {
		long next = System.nanoTime();
		while (!this.stop.get()) {
			next = pace(next);
			long call = this.calls.getAndIncrement();
			if (call >= this.maxCalls) {
				return;
			}
			int policy = (int) (call % this.requests.length);
			RateLimitRequest request = request(policy);
			long start = System.nanoTime();
			this.sink.started(call, start);
			try {
				RateLimitDecision decision = this.limiter.check(request);
				this.sink.completed(call, policy, start, System.nanoTime(), decision, null);
			}
			catch (RuntimeException ex) {
				this.sink.completed(call, policy, start, System.nanoTime(), null, ex);
			}
		}
	}

	private void nonBlockingLoop() {
		Semaphore inFlight = new Semaphore(this.concurrency);
		long next = System.nanoTime();
		try {
			while (!this.stop.get()) {
				if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
					continue;
				}
				next = pace(next);
				long call = this.calls.getAndIncrement();
				if (call >= this.maxCalls) {
					return;
				}
				int policy = (int) (call % this.requests.length);
				RateLimitRequest request = request(policy);
				long start = System.nanoTime();
				this.sink.started(call, start);
				this.limiter.checkAsync(request).subscribe((decision) -> {
					this.sink.completed(call, policy, start, System.nanoTime(), decision, null);
					inFlight.release();
				}, (error) -> {
					this.sink.completed(call, policy, start, System.nanoTime(), null, error);
					inFlight.release();
				});
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Waits until the next call is due; a caller that fell behind goes at once, without catching up. */
	private long pace(long next) {
		if (this.intervalNanos == 0) {
			return next;
		}
		long now = System.nanoTime();
		if (next > now) {
			LockSupport.parkNanos(next - now);
			return next + this.intervalNanos;
		}
		return now + this.intervalNanos;
	}

	private RateLimitRequest request(int policy) {
		return this.requests[policy][ThreadLocalRandom.current().nextInt(IDENTITIES)];
	}

	private static Thread daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

}
