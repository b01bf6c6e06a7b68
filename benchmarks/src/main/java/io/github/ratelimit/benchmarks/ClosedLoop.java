package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A closed-loop load of the {@code harness} and {@code cluster} sections, apart from the engine section's
 * {@link LoadDriver}: blocking, N threads each making its next call when the last one answers; non-blocking, N calls
 * in flight, each answer sending the next. Every call picks a key at random. The load runs for a settling time,
 * then its decisions are counted for the measured length; hooks run at the measurement's start and end (for the
 * Redis servers' counters).
 */
final class ClosedLoop {

	private ClosedLoop() {
	}

	/** One decision for a key, blocking or not; {@code false} when denied. */
	interface Call {

		boolean blocking(int key);

		CompletableFuture<Boolean> async(int key);

	}

	/** What was counted during the measurement. */
	record Counts(long decisions, long denied, long errors, double seconds) {

		double perSecond() {
			return this.decisions / this.seconds;
		}

		double deniedShare() {
			return (this.decisions == 0) ? 0 : (double) this.denied / this.decisions;
		}

	}

	static Counts run(Call call, int keys, boolean blocking, int concurrency, Duration settle, Duration length,
			Runnable atStart, Runnable atEnd) throws InterruptedException {
		Tally tally = new Tally();
		CountDownLatch finished = new CountDownLatch(concurrency);
		for (int i = 0; i < concurrency; i++) {
			if (blocking) {
				Thread thread = new Thread(() -> {
					ThreadLocalRandom random = ThreadLocalRandom.current();
					while (!tally.stopped) {
						try {
							tally.count(call.blocking(random.nextInt(keys)), null);
						}
						catch (RuntimeException ex) {
							tally.count(false, ex);
						}
					}
					finished.countDown();
				}, "closed-loop-" + i);
				thread.setDaemon(true);
				thread.start();
			}
			else {
				new Chain(call, keys, tally, finished).next();
			}
		}
		Thread.sleep(settle.toMillis());
		atStart.run();
		long decisions = tally.decisions.sum();
		long denied = tally.denied.sum();
		long errors = tally.errors.sum();
		long start = System.nanoTime();
		Thread.sleep(length.toMillis());
		// the hooks run before the counters are read at both ends, so that what they read (Redis' counters, which
		// take a moment) covers the same stretch of the load as the counters
		atEnd.run();
		decisions = tally.decisions.sum() - decisions;
		denied = tally.denied.sum() - denied;
		errors = tally.errors.sum() - errors;
		double seconds = (System.nanoTime() - start) / 1e9;
		tally.stopped = true;
		if (!finished.await(60, TimeUnit.SECONDS)) {
			throw new IllegalStateException("the load's calls did not finish within 60 s");
		}
		return new Counts(decisions, denied, errors, seconds);
	}

	private static final class Tally {

		final LongAdder decisions = new LongAdder();

		final LongAdder denied = new LongAdder();

		final LongAdder errors = new LongAdder();

		volatile boolean stopped;

		void count(Boolean admitted, Throwable error) {
			if (error != null) {
				this.errors.increment();
				return;
			}
			if (!admitted) {
				this.denied.increment();
			}
			this.decisions.increment();
		}

	}

	/** One call in flight; an answer already there when the call returns is taken in the loop, not by recursion. */
	private record Chain(Call call, int keys, Tally tally, CountDownLatch finished) {

		void next() {
			while (!this.tally.stopped) {
				CompletableFuture<Boolean> answer;
				try {
					answer = this.call.async(ThreadLocalRandom.current().nextInt(this.keys));
				}
				catch (RuntimeException ex) {
					this.tally.count(false, ex);
					continue;
				}
				if (!answer.isDone()) {
					answer.whenComplete((admitted, error) -> {
						this.tally.count(admitted, error);
						next();
					});
					return;
				}
				try {
					this.tally.count(answer.join(), null);
				}
				catch (RuntimeException ex) {
					this.tally.count(false, ex);
				}
			}
			this.finished.countDown();
		}

	}

}
