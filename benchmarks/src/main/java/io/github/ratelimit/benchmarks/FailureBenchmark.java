package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 5: what a request sees when Redis fails. For each {@link Fault} (killed, frozen, slow) and each path
 * (blocking, non-blocking), a guarded limiter built as the starter builds it by default (50 ms budget, Resilience4j
 * breaker, Lettuce reconnect delay capped at 1 s, 60 s client command timeout) decides for three policies, one per
 * {@link FailureMode}, sharing the limiter and its breaker as an application's policies do: 1 s healthy, 5 s of
 * failure, then 4 s with Redis back. Then the baseline: the unguarded limiter on Spring Data Redis' defaults, Redis
 * frozen or killed, each call's wait measured without waiting for it longer than the failure plus a few seconds.
 * Runs on a {@code redis-server} of its own, since it kills and freezes it.
 */
final class FailureBenchmark {

	/** The two paths: blocking threads in a closed loop, or non-blocking calls in flight. */
	enum Path {

		BLOCKING("blocking x8", true, 8), NON_BLOCKING("non-blocking x64", false, 64);

		private final String label;

		private final boolean blocking;

		private final int concurrency;

		Path(String label, boolean blocking, int concurrency) {
			this.label = label;
			this.blocking = blocking;
			this.concurrency = concurrency;
		}

		String label() {
			return this.label;
		}

	}

	/** Load on a healthy Redis at the start of the section, reported as a cold start. */
	static final Duration COLD_START = Duration.ofSeconds(8);

	static final Duration WARMUP = Duration.ofSeconds(1);

	static final Duration HEALTHY = Duration.ofSeconds(1);

	static final Duration OUTAGE = Duration.ofSeconds(5);

	static final Duration AFTER = Duration.ofSeconds(4);

	/** The longest the baseline waits, after Redis is back, for its stuck calls before closing the connection. */
	static final Duration UNGUARDED_AFTER = Duration.ofSeconds(8);

	/** Decisions in a row that Redis must make for enforcement to count as resumed. */
	static final int IN_A_ROW = 5;

	/** {@code -Dbench.failure.timeline=true} prints what happened per 100 ms of each guarded run. */
	private static final boolean TIMELINE = Boolean.getBoolean("bench.failure.timeline");

	/** The most calls of one run, whatever the time. */
	private static final long MAX_CALLS = 2_000_000;

	private final double rate = Double.parseDouble(System.getProperty("bench.failure.rate", "8000"));

	private final List<RateLimitPolicy> policies = new ArrayList<>();

	private final boolean freshJvm;

	/**
	 * The section.
	 * @param freshJvm whether no other section ran before in this JVM
	 */
	FailureBenchmark(boolean freshJvm) {
		this.freshJvm = freshJvm;
		for (FailureMode mode : FailureMode.values()) {
			this.policies.add(RateLimitPolicy.builder("fail-" + mode.id())
				.algorithm(Algorithm.GCRA)
				.limit(1000)
				.window(Duration.ofSeconds(1))
				.failureMode(mode)
				.build());
		}
	}

	/**
	 * A guarded run.
	 * @param outageNanos from the failure to Redis' return (the restart or thaw returned)
	 * @param breakerOpenedNanos from the failure to the breaker's first opening, null if it did not
	 * @param halfOpenTrials times the breaker let calls through to try Redis while it failed
	 * @param reconnectedNanos from Redis' return to Lettuce's first reconnect (negative: before), null if it did not
	 * reconnect
	 * @param breakerClosedNanos from Redis' return to the breaker closing, null if it did not
	 * @param toEnforcementNanos from Redis' return to the first of {@link #IN_A_ROW} decisions in a row by Redis, -1
	 * if not within {@link #AFTER}
	 * @param gcLongestMillis the JVM's longest garbage-collection pause during the measured phases
	 * @param stateAtFailure the breaker's state when the failure was injected (closed, unless the healthy load
	 * tripped it)
	 * @param reopenedAfterReturn how many times the breaker opened after Redis was back
	 */
	record GuardedRun(Fault fault, Path path, DecisionLog log, long outageNanos, @Nullable Long breakerOpenedNanos,
			int halfOpenTrials, @Nullable Long reconnectedNanos, @Nullable Long breakerClosedNanos,
			long toEnforcementNanos, long gcLongestMillis, CircuitBreaker.State stateAtFailure,
			int reopenedAfterReturn) {
	}

	/**
	 * A baseline run.
	 * @param beforeReturn calls of the failure completed while Redis was away
	 * @param atReturn calls still waiting when Redis came back, 5 s into the failure
	 * @param overall calls of the failure completed by the end of the observation
	 * @param firstDecisionNanos from Redis' return to the first call that decided, -1 if none did
	 * @param atEnd calls of the failure still waiting when the connection was closed
	 * @param observedNanos how long after Redis' return it was observed
	 * @param threadsEnded whether every load thread had ended once the connection was closed
	 */
	record UnguardedRun(Fault fault, Path path, long commandTimeoutMillis, CallLog.Completed beforeReturn,
			CallLog.Waiting atReturn, CallLog.Completed overall, long firstDecisionNanos, CallLog.Waiting atEnd,
			long observedNanos, boolean threadsEnded) {

		int calls() {
			return this.beforeReturn.decided() + this.beforeReturn.threw() + this.atReturn.count();
		}

	}

	/**
	 * The first load of the section on a healthy Redis.
	 * @param breakerOpenings how many times the breaker opened meanwhile
	 * @param gcPauses the JVM's garbage-collection pauses meanwhile
	 * @param gcLongestMillis the longest of them
	 */
	record ColdStart(Path path, DecisionLog log, int breakerOpenings, int gcPauses, long gcLongestMillis) {
	}

	/**
	 * What the section measured.
	 * @param freshJvm whether the cold start was the first work of the JVM (no other section ran before)
	 * @param loadAverageAtStart the system's load average over the last minute when the section started: other
	 * processes on the same cores show here
	 * @param loadAverageAtEnd the same when it ended
	 */
	record Result(List<ColdStart> coldStarts, List<GuardedRun> guarded, List<UnguardedRun> unguarded, double rate,
			boolean freshJvm, double loadAverageAtStart, double loadAverageAtEnd) {
	}

	Result run() throws InterruptedException {
		double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
		List<ColdStart> coldStarts = new ArrayList<>();
		List<GuardedRun> guarded = new ArrayList<>();
		List<UnguardedRun> unguarded = new ArrayList<>();
		try (RedisServer redis = RedisServer.start()) {
			for (Path path : Path.values()) {
				ColdStart cold = warmUp(redis, path);
				coldStarts.add(cold);
				System.out.printf(Locale.ROOT,
						"cold start %-17s %d decisions, %d degraded, breaker opened %d times, longest GC pause %d ms%n",
						path.label(), cold.log().decisions(DecisionLog.Phase.BEFORE),
						cold.log().decisions(DecisionLog.Phase.BEFORE)
								- cold.log().outcomes(DecisionLog.Phase.BEFORE, Enforcement.ENFORCED),
						cold.breakerOpenings(), cold.gcLongestMillis());
			}
			for (Fault fault : Fault.values()) {
				for (Path path : Path.values()) {
					GuardedRun run = guarded(redis, fault, path);
					guarded.add(run);
					if (TIMELINE) {
						System.out.print(run.log().timeline());
					}
					System.out.printf(Locale.ROOT,
							"failure %-7s %-17s breaker opened %s ms, closed %s ms after return, enforced again %s ms after return%n",
							fault.label(), path.label(), millis(run.breakerOpenedNanos()), millis(run.breakerClosedNanos()),
							millis(run.toEnforcementNanos()));
				}
			}
			for (Fault fault : List.of(Fault.FROZEN, Fault.KILLED)) {
				for (Path path : Path.values()) {
					UnguardedRun run = unguarded(redis, fault, path);
					unguarded.add(run);
					System.out.printf(Locale.ROOT,
							"unguarded %-7s %-17s %d calls, %d still waiting after %d s (oldest %s ms), longest %s ms%n",
							fault.label(), path.label(), run.calls(), run.atReturn().count(), OUTAGE.toSeconds(),
							millis(run.atReturn().oldestNanos()), millis(run.overall().longestNanos()));
				}
			}
		}
		return new Result(coldStarts, guarded, unguarded, this.rate, this.freshJvm, loadAtStart,
				ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
	}

	/**
	 * Warms the JIT up on a healthy Redis, the budget and breaker at work from the first decision:
	 * {@link #COLD_START} of load, reported as what a cold start looks like, then 1 s with the breaker forced open
	 * (the failure modes decide).
	 */
	private ColdStart warmUp(RedisServer redis, Path path) throws InterruptedException {
		try (StarterLimiter starter = new StarterLimiter(redis.host(), redis.port()); GcPauses gc = new GcPauses()) {
			DecisionLog log = new DecisionLog(this.policies.size());
			long start = System.nanoTime();
			log.measureFrom(start);
			FailureLoad load = load(starter.limiter(), log, path).start();
			Thread.sleep(COLD_START.toMillis());
			long end = System.nanoTime();
			log.until(end);
			int gcPauses = gc.count();
			long gcLongest = gc.longestMillis();
			starter.breaker().transitionToForcedOpenState();
			Thread.sleep(1000);
			starter.breaker().transitionToClosedState();
			Thread.sleep(200);
			load.stop(Duration.ofSeconds(2));
			return new ColdStart(path, log, starter.transitions(CircuitBreaker.State.OPEN, start, end), gcPauses,
					gcLongest);
		}
		finally {
			healthy(redis);
		}
	}

	private GuardedRun guarded(RedisServer redis, Fault fault, Path path) throws InterruptedException {
		TcpProxy proxy = fault.throughProxy() ? TcpProxy.start(redis.address()) : null;
		FailureLoad load = null;
		try (StarterLimiter starter = new StarterLimiter(redis.host(), (proxy != null) ? proxy.port() : redis.port());
				GcPauses gc = new GcPauses()) {
			DecisionLog log = new DecisionLog(this.policies.size());
			load = load(starter.limiter(), log, path).start();
			Thread.sleep(WARMUP.toMillis());
			gc.reset();
			log.measureFrom(System.nanoTime());
			Thread.sleep(HEALTHY.toMillis());
			CircuitBreaker.State stateAtFailure = starter.breaker().getState();
			long failedAt = System.nanoTime();
			log.failedAt(failedAt);
			fault.inject(redis, proxy);
			sleepUntil(failedAt + OUTAGE.toNanos());
			fault.restore(redis, proxy);
			long returnedAt = System.nanoTime();
			log.returnedAt(returnedAt);
			Thread.sleep(AFTER.toMillis());
			long end = System.nanoTime();
			log.until(end);
			long gcLongest = gc.longestMillis();
			load.stop(Duration.ofSeconds(2));
			return new GuardedRun(fault, path, log, returnedAt - failedAt,
					minus(starter.firstTransition(CircuitBreaker.State.OPEN, failedAt, end), failedAt),
					starter.transitions(CircuitBreaker.State.HALF_OPEN, failedAt, returnedAt),
					minus(starter.firstConnect(failedAt), returnedAt),
					minus(starter.firstTransition(CircuitBreaker.State.CLOSED, failedAt, end), returnedAt),
					log.timeToEnforcementNanos(IN_A_ROW), gcLongest, stateAtFailure,
					starter.transitions(CircuitBreaker.State.OPEN, returnedAt, end));
		}
		finally {
			if (load != null) {
				load.stop(Duration.ofSeconds(2));
			}
			if (proxy != null) {
				proxy.close();
			}
			healthy(redis);
		}
	}

	private UnguardedRun unguarded(RedisServer redis, Fault fault, Path path) throws InterruptedException {
		// Spring Data Redis as an application gets it by default: Lettuce's own client resources (reconnect delay
		// up to 30 s) and a command timeout of 60 s
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		FailureLoad load = null;
		boolean ended = false;
		try {
			factory.afterPropertiesSet();
			factory.start();
			RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
			backend.connect();
			RateLimiter limiter = new DefaultRateLimiter(backend);
			CallLog log = new CallLog();
			load = load(limiter, log, path).start();
			Thread.sleep(WARMUP.toMillis());
			long failedAt = System.nanoTime();
			fault.inject(redis, null);
			sleepUntil(failedAt + OUTAGE.toNanos());
			long fiveSeconds = System.nanoTime();
			CallLog.Waiting atReturn = log.waiting(fiveSeconds, fiveSeconds);
			CallLog.Completed beforeReturn = log.completed(failedAt, fiveSeconds, fiveSeconds);
			fault.restore(redis, null);
			long returnedAt = System.nanoTime();
			long deadline = returnedAt + UNGUARDED_AFTER.toNanos();
			while (System.nanoTime() - deadline < 0 && (log.waiting(System.nanoTime(), fiveSeconds).count() > 0
					|| log.firstDecisionAfter(returnedAt) < 0)) {
				Thread.sleep(50);
			}
			long end = System.nanoTime();
			CallLog.Waiting atEnd = log.waiting(end, fiveSeconds);
			load.stop(Duration.ofSeconds(1));
			CallLog.Completed overall = log.completed(failedAt, fiveSeconds, end);
			long firstDecision = log.firstDecisionAfter(returnedAt);
			factory.destroy(); // fails what still waits, so that no thread stays stuck in a call
			ended = load.stop(Duration.ofSeconds(5));
			return new UnguardedRun(fault, path, factory.getTimeout(), beforeReturn, atReturn, overall, firstDecision,
					atEnd, end - returnedAt, ended);
		}
		finally {
			if (load != null && !ended) {
				load.stop(Duration.ofSeconds(1));
			}
			factory.destroy();
			healthy(redis);
		}
	}

	private FailureLoad load(RateLimiter limiter, FailureLoad.Sink sink, Path path) {
		return new FailureLoad(limiter, this.policies, sink, path.blocking, path.concurrency, this.rate, MAX_CALLS);
	}

	/** Leaves Redis running and answering for the next run. */
	private static void healthy(RedisServer redis) {
		if (redis.isFrozen()) {
			redis.thaw();
		}
		if (!redis.isRunning()) {
			redis.restart();
		}
	}

	private static @Nullable Long minus(@Nullable Long nanos, long origin) {
		return (nanos != null) ? nanos - origin : null;
	}

	private static void sleepUntil(long nanos) throws InterruptedException {
		long left = nanos - System.nanoTime();
		if (left > 0) {
			TimeUnit.NANOSECONDS.sleep(left);
		}
	}

	private static String millis(@Nullable Long nanos) {
		if (nanos == null || nanos == -1) {
			return "-";
		}
		return String.format(Locale.ROOT, "%,.0f", nanos / 1e6);
	}

}
