package io.github.ratelimit.benchmarks;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * What the decisions of a guarded limiter looked like around one failure of Redis: per phase (by when a decision
 * started; one in flight when the failure began counts in the failure) and policy, the latency (HdrHistogram), the
 * enforcement outcomes and why Redis did not decide; and every decision completed after Redis came back, in
 * completion order, to find when Redis decided again.
 */
final class DecisionLog implements FailureLoad.Sink {

	/** When a decision started, relative to the failure. */
	enum Phase {

		BEFORE("healthy (1 s before)"), FIRST_SECOND("failure, first second"),
		BREAKER_OPEN("failure, rest (breaker open)"), AFTER("Redis back");

		private final String label;

		Phase(String label) {
			this.label = label;
		}

		String label() {
			return this.label;
		}

	}

	/** Why the failure modes decided: the time budget ran out, the breaker was open, or Redis failed. */
	enum Cause {

		TIMEOUT, BREAKER_OPEN, ERROR

	}

	/** Decisions after Redis' return kept for {@link #timeToEnforcementNanos(int)}; later ones are not kept. */
	private static final int LOG_CAPACITY = 200_000;

	private static final long HIGHEST = 60_000_000_000L;

	/** Buckets of the {@link #timeline()}: 25 s. */
	private static final int BUCKETS = 250;

	private static final long BUCKET_NANOS = 100_000_000L;

	private final int policies;

	private final Histogram[][] latency;

	private final LongAdder[][] outcomes = new LongAdder[Phase.values().length][Enforcement.values().length];

	private final LongAdder[][] causes = new LongAdder[Phase.values().length][Cause.values().length];

	/** Calls that threw instead of deciding (a guarded limiter should never). */
	private final LongAdder[] thrown = new LongAdder[Phase.values().length];

	private final AtomicLongArray endNanos = new AtomicLongArray(LOG_CAPACITY);

	/** 1 when Redis made the decision, 0 when the failure modes did. */
	private final AtomicIntegerArray enforced = new AtomicIntegerArray(LOG_CAPACITY);

	private final AtomicInteger logged = new AtomicInteger();

	/** Why Redis failed, when it failed with an error: phase, exception and message, to the count. */
	private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

	/** Per {@link #BUCKET_NANOS} from {@link #measureFrom}: decisions, degraded, timeouts, errors, longest. */
	private final AtomicLongArray[] timeline = { new AtomicLongArray(BUCKETS), new AtomicLongArray(BUCKETS),
			new AtomicLongArray(BUCKETS), new AtomicLongArray(BUCKETS), new AtomicLongArray(BUCKETS) };

	private volatile long measureFrom = Long.MAX_VALUE;

	private volatile long failedAt = Long.MAX_VALUE;

	private volatile long returnedAt = Long.MAX_VALUE;

	private volatile long until = Long.MAX_VALUE;

	DecisionLog(int policies) {
		this.policies = policies;
		this.latency = new Histogram[Phase.values().length][policies];
		for (int phase = 0; phase < Phase.values().length; phase++) {
			for (int p = 0; p < policies; p++) {
				this.latency[phase][p] = new ConcurrentHistogram(HIGHEST, 3);
			}
			for (int e = 0; e < Enforcement.values().length; e++) {
				this.outcomes[phase][e] = new LongAdder();
			}
			for (int c = 0; c < Cause.values().length; c++) {
				this.causes[phase][c] = new LongAdder();
			}
			this.thrown[phase] = new LongAdder();
		}
	}

	/** From now on decisions count (before: warm-up). */
	void measureFrom(long nanos) {
		this.measureFrom = nanos;
	}

	/** The failure was injected now. */
	void failedAt(long nanos) {
		this.failedAt = nanos;
	}

	/** Redis answers again now. */
	void returnedAt(long nanos) {
		this.returnedAt = nanos;
	}

	/** Decisions started from now on do not count. */
	void until(long nanos) {
		this.until = nanos;
	}

	long failedAt() {
		return this.failedAt;
	}

	long returnedAt() {
		return this.returnedAt;
	}

	@Override
	public void completed(long call, int policy, long startNanos, long endNanos, @Nullable RateLimitDecision decision,
			@Nullable Throwable error) {
		if (endNanos - this.returnedAt >= 0 && this.returnedAt != Long.MAX_VALUE) {
			int at = this.logged.getAndIncrement();
			if (at < LOG_CAPACITY) {
				this.enforced.set(at, (decision != null && !decision.degraded()) ? 1 : 0);
				this.endNanos.set(at, endNanos);
			}
		}
		Phase phase = phase(startNanos, endNanos);
		if (phase == null) {
			return;
		}
		this.latency[phase.ordinal()][policy].recordValue(Math.min(endNanos - startNanos, HIGHEST));
		int bucket = (int) ((startNanos - this.measureFrom) / BUCKET_NANOS);
		if (bucket < BUCKETS) {
			this.timeline[0].incrementAndGet(bucket);
			this.timeline[4].accumulateAndGet(bucket, endNanos - startNanos, Math::max);
		}
		if (decision == null) {
			this.thrown[phase.ordinal()].increment();
			return;
		}
		this.outcomes[phase.ordinal()][decision.decisions().get(0).enforcement().ordinal()].increment();
		Throwable failure = decision.failure().orElse(null);
		if (failure == null) {
			return;
		}
		Cause cause = cause(failure);
		this.causes[phase.ordinal()][cause.ordinal()].increment();
		if (bucket < BUCKETS) {
			this.timeline[1].incrementAndGet(bucket);
			if (cause == Cause.TIMEOUT) {
				this.timeline[2].incrementAndGet(bucket);
			}
			if (cause == Cause.ERROR) {
				this.timeline[3].incrementAndGet(bucket);
			}
		}
		if (cause == Cause.ERROR) {
			String message = String.valueOf(failure.getMessage());
			String key = phase.label() + ": " + failure.getClass().getName() + ": "
					+ message.substring(0, Math.min(100, message.length()));
			this.errors.computeIfAbsent(key, (k) -> new LongAdder()).increment();
		}
	}

	/** The errors Redis failed with, by phase, exception and message, with their counts. */
	Map<String, Long> errors() {
		Map<String, Long> sorted = new TreeMap<>();
		this.errors.forEach((key, count) -> sorted.put(key, count.sum()));
		return sorted;
	}

	/**
	 * Per 100 ms by when decisions started, from the start of the measurement: how many, how many degraded, timed
	 * out and failed with an error, and the longest; for finding out what happened when.
	 * @return one line per 100 ms that had decisions
	 */
	String timeline() {
		StringBuilder out = new StringBuilder();
		for (int b = 0; b < BUCKETS; b++) {
			long decisions = this.timeline[0].get(b);
			if (decisions == 0) {
				continue;
			}
			long at = this.measureFrom + b * BUCKET_NANOS;
			String mark = within(this.failedAt, at) ? " <- failure" : within(this.returnedAt, at) ? " <- Redis back" : "";
			out.append(String.format(Locale.ROOT,
					"%6d ms %6d decisions %6d degraded %4d timeouts %4d errors max %8.1f ms%s%n", b * 100, decisions,
					this.timeline[1].get(b), this.timeline[2].get(b), this.timeline[3].get(b),
					this.timeline[4].get(b) / 1e6, mark));
		}
		return out.toString();
	}

	private static boolean within(long moment, long bucketStart) {
		return moment != Long.MAX_VALUE && moment - bucketStart >= 0 && moment - bucketStart < BUCKET_NANOS;
	}

	/**
	 * The phase of a decision: by when it started, except that a decision still in flight when the failure began
	 * belongs to the failure's first second, not to the healthy phase.
	 */
	private @Nullable Phase phase(long start, long end) {
		if (start - this.measureFrom < 0 || start - this.until >= 0) {
			return null;
		}
		if (end - this.failedAt < 0) {
			return Phase.BEFORE;
		}
		if (start - this.failedAt < 1_000_000_000L) {
			return Phase.FIRST_SECOND;
		}
		return (start - this.returnedAt < 0) ? Phase.BREAKER_OPEN : Phase.AFTER;
	}

	private static Cause cause(Throwable failure) {
		if (failure instanceof TimeoutException) {
			return Cause.TIMEOUT;
		}
		if (failure instanceof CallNotPermittedException) {
			return Cause.BREAKER_OPEN;
		}
		return Cause.ERROR;
	}

	Histogram latency(Phase phase, int policy) {
		return this.latency[phase.ordinal()][policy];
	}

	/** The latency of all policies' decisions in a phase. */
	Histogram latency(Phase phase) {
		Histogram all = new Histogram(HIGHEST, 3);
		for (int p = 0; p < this.policies; p++) {
			all.add(this.latency[phase.ordinal()][p]);
		}
		return all;
	}

	long outcomes(Phase phase, Enforcement enforcement) {
		return this.outcomes[phase.ordinal()][enforcement.ordinal()].sum();
	}

	long causes(Phase phase, Cause cause) {
		return this.causes[phase.ordinal()][cause.ordinal()].sum();
	}

	long thrown(Phase phase) {
		return this.thrown[phase.ordinal()].sum();
	}

	long decisions(Phase phase) {
		long sum = thrown(phase);
		for (Enforcement enforcement : Enforcement.values()) {
			sum += outcomes(phase, enforcement);
		}
		return sum;
	}

	/**
	 * The time from Redis' return to the first of {@code inARow} decisions in a row (in completion order, all
	 * policies) that Redis made.
	 * @param inARow how many in a row
	 * @return nanoseconds after the return, or -1 when it did not happen while decisions were logged
	 */
	long timeToEnforcementNanos(int inARow) {
		int count = Math.min(this.logged.get(), LOG_CAPACITY);
		Integer[] order = new Integer[count];
		for (int i = 0; i < count; i++) {
			order[i] = i;
		}
		Arrays.sort(order, (a, b) -> Long.compare(this.endNanos.get(a), this.endNanos.get(b)));
		int run = 0;
		for (int i = 0; i < count; i++) {
			run = (this.enforced.get(order[i]) == 1) ? run + 1 : 0;
			if (run == inARow) {
				return this.endNanos.get(order[i - inARow + 1]) - this.returnedAt;
			}
		}
		return -1;
	}

}
