package io.github.ratelimit.benchmarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

import io.github.ratelimit.core.RateLimitDecision;
import org.jspecify.annotations.Nullable;

/**
 * Every call of an unguarded limiter around one failure of Redis: when it started and ended and whether it decided
 * or threw, and which calls are still waiting at any moment. For calls that may not return for a minute: nothing here
 * waits for them.
 */
final class CallLog implements FailureLoad.Sink {

	private static final int CAPACITY = 200_000;

	/** Calls started and not completed: call number to start time. */
	private final Map<Long, Long> pending = new ConcurrentHashMap<>();

	private final AtomicLongArray startNanos = new AtomicLongArray(CAPACITY);

	private final AtomicLongArray endNanos = new AtomicLongArray(CAPACITY);

	/** 1 when the call decided, 2 when it threw; 0 while not written. */
	private final AtomicIntegerArray outcome = new AtomicIntegerArray(CAPACITY);

	private final AtomicInteger logged = new AtomicInteger();

	@Override
	public void started(long call, long startNanos) {
		this.pending.put(call, startNanos);
	}

	@Override
	public void completed(long call, int policy, long startNanos, long endNanos, @Nullable RateLimitDecision decision,
			@Nullable Throwable error) {
		this.pending.remove(call);
		int at = this.logged.getAndIncrement();
		if (at < CAPACITY) {
			this.startNanos.set(at, startNanos);
			this.endNanos.set(at, endNanos);
			this.outcome.set(at, (decision != null) ? 1 : 2);
		}
	}

	/** A moment's view of the calls still waiting: how many started before {@code before}, and the oldest. */
	record Waiting(int count, long oldestNanos) {
	}

	Waiting waiting(long now, long startedBefore) {
		int count = 0;
		long oldest = 0;
		for (long start : this.pending.values()) {
			if (start - startedBefore < 0) {
				count++;
				oldest = Math.max(oldest, now - start);
			}
		}
		return new Waiting(count, oldest);
	}

	/** Completed calls that overlap {@code [from, to)}: not completed before {@code from}, started before {@code to}. */
	record Completed(int decided, int threw, long longestNanos, long longestThrownNanos) {
	}

	/**
	 * The calls that were in flight at {@code from} or started before {@code to}, and completed.
	 * @param from the start of the interval
	 * @param to its end
	 * @param completedBefore only calls completed before this
	 * @return the counts
	 */
	Completed completed(long from, long to, long completedBefore) {
		int decided = 0;
		int threw = 0;
		long longest = 0;
		long longestThrown = 0;
		for (int i = 0; i < written(); i++) {
			int outcome = this.outcome.get(i);
			long start = this.startNanos.get(i);
			long end = this.endNanos.get(i);
			if (outcome == 0 || end - from < 0 || start - to >= 0 || end - completedBefore >= 0) {
				continue;
			}
			longest = Math.max(longest, end - start);
			if (outcome == 1) {
				decided++;
			}
			else {
				threw++;
				longestThrown = Math.max(longestThrown, end - start);
			}
		}
		return new Completed(decided, threw, longest, longestThrown);
	}

	/**
	 * When the first call to complete with a decision at or after {@code after} completed.
	 * @param after the moment
	 * @return nanoseconds after it, or -1 when none did
	 */
	long firstDecisionAfter(long after) {
		long first = Long.MAX_VALUE;
		for (int i = 0; i < written(); i++) {
			int outcome = this.outcome.get(i);
			long end = this.endNanos.get(i);
			if (outcome == 1 && end - after >= 0) {
				first = Math.min(first, end - after);
			}
		}
		return (first == Long.MAX_VALUE) ? -1 : first;
	}

	private int written() {
		return Math.min(this.logged.get(), CAPACITY);
	}

}
