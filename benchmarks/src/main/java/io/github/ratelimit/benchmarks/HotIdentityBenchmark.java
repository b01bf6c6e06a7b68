package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section {@code hot}: one identity sending ten times its limit (the shape of an abusive client or a retry storm)
 * among normal traffic, with the local denial cache off and on, per algorithm the cache may serve (concurrency is
 * never cached: its permits come back at any time).
 * <p>
 * Policy: 100 per second (token bucket and GCRA: burst 100). Traffic: the hot identity at 1,000 requests per second,
 * paced, and 1,000 other identities at one request per second each (1,000 per second, all admitted), interleaved.
 * <ul>
 * <li><b>Paced, on the real clock</b>: the traffic above for a few seconds through a guarded limiter (the starter's
 * kind) on Redis, non-blocking; counted: the Redis server's script calls ({@code INFO commandstats}: EVALSHA, EVAL,
 * FCALL and their read-only forms) during the measurement, the decisions, and, from a counting wrapper around the
 * backend, which calls answered an admission and which a denial. Redis calls per denied request are the server's
 * calls less one per admitted request, over the denied requests (target: at most 0.05); the wrapper's count of
 * calls per admitted request must stay 1.00 (no extra call for admitted requests).</li>
 * <li><b>Replayed at explicit times</b>: the same traffic as a trace with explicit times, replayed through a limiter
 * without the cache and one with it, on two key prefixes: every decision compared one by one (admitted, remaining,
 * retry-after and reset-after, and that both were made by Redis or the cache, never a failure mode).</li>
 * </ul>
 */
final class HotIdentityBenchmark {

	static final long LIMIT = 100;

	static final Duration WINDOW = Duration.ofSeconds(1);

	/** The hot identity's requests per second: ten times its limit. */
	static final int HOT_RATE = 1_000;

	static final int NORMAL_IDENTITIES = 1_000;

	/** All the other identities' requests per second, together. */
	static final int NORMAL_RATE = 1_000;

	static final String HOT = "hot-client";

	static final long DENIAL_CACHE_SIZE = 10_000;

	/** Whether {@link #limiter} builds a limiter with the denial cache when asked to. */
	static final boolean DENIAL_CACHE_WIRED = true;

	static final List<Algorithm> ALGORITHMS = List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.FIXED_WINDOW,
			Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_WINDOW_LOG);

	private final Duration leadIn;

	private final Duration paced;

	private final Duration trace;

	HotIdentityBenchmark(boolean quick) {
		this.leadIn = Duration.ofMillis(quick ? 500 : 1000);
		this.paced = Duration.ofSeconds(quick ? 2 : 10);
		this.trace = Duration.ofSeconds(quick ? 2 : 10);
	}

	/** The paced run of one algorithm with the cache off or on. */
	record Paced(Algorithm algorithm, boolean cache, double seconds, long hotDecisions, long hotDenied,
			long otherDecisions, long otherDenied, long scriptCalls, long admittingCalls, long denyingCalls,
			long undecided) {

		long admitted() {
			return this.hotDecisions - this.hotDenied + this.otherDecisions - this.otherDenied;
		}

		long denied() {
			return this.hotDenied + this.otherDenied;
		}

		double callsPerDenied() {
			return (this.denied() == 0) ? 0 : (double) (this.scriptCalls - admitted()) / denied();
		}

		double denyingCallsPerDenied() {
			return (this.denied() == 0) ? 0 : (double) this.denyingCalls / denied();
		}

		double callsPerAdmitted() {
			return (admitted() == 0) ? 0 : (double) this.admittingCalls / admitted();
		}

		/**
		 * Whether the server's count of script calls agrees with the calls the backend made (within one per
		 * thousand): when not, something else reached the server or reset its statistics, and the run says so.
		 */
		boolean countsAgree() {
			return Math.abs(this.scriptCalls - (this.admittingCalls + this.denyingCalls)) <= Math.max(1,
					(this.admittingCalls + this.denyingCalls) / 1000);
		}

	}

	/** The explicit-time replay of one algorithm through both limiters. */
	record Replay(Algorithm algorithm, int requests, long deniedOff, long deniedOn, long callsOff, long callsOn,
			int differentAdmission, int differentRemaining, int differentRetryAfter, long largestRetryAfterGapMicros,
			int differentResetAfter, int notEnforced, String firstDifference) {

		/**
		 * Whether the cache changed no decision. A wait the token bucket computes again later can come out 1 µs
		 * longer than one counted down (its refill is floating-point arithmetic); the headers carry whole seconds.
		 */
		boolean sameDecisions() {
			return this.differentAdmission == 0 && this.differentRemaining == 0 && this.largestRetryAfterGapMicros <= 1
					&& this.differentResetAfter == 0 && this.notEnforced == 0;
		}

		double callsPerDeniedOff() {
			return (this.deniedOff == 0) ? 0 : (double) (this.callsOff - (this.requests - this.deniedOff)) / this.deniedOff;
		}

		double callsPerDeniedOn() {
			return (this.deniedOn == 0) ? 0 : (double) (this.callsOn - (this.requests - this.deniedOn)) / this.deniedOn;
		}

	}

	record Outcome(List<Paced> paced, List<Replay> replays) {
	}

	Outcome run(RedisServer redis) throws InterruptedException {
		List<Paced> paced = new ArrayList<>();
		List<Replay> replays = new ArrayList<>();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			// not reported: the JIT and the connection, so that the first paced run keeps its pace
			paced(factory, probe, RateLimitPolicy.builder("hot-warm-up").algorithm(Algorithm.TOKEN_BUCKET).limit(LIMIT).window(WINDOW).build(), false,
					this.leadIn);
			for (Algorithm algorithm : ALGORITHMS) {
				redis.flushAll();
				RateLimitPolicy policy = RateLimitPolicy.builder("hot-" + algorithm.code())
					.algorithm(algorithm)
					.limit(LIMIT)
					.window(WINDOW)
					.build();
				for (boolean cache : new boolean[] { false, true }) {
					Paced result = paced(factory, probe, policy, cache, this.paced);
					paced.add(result);
					System.out.printf(Locale.ROOT,
							"hot %-24s cache %-3s hot %,6d decisions %3.0f%% denied, %,6d script calls (backend: %,d), %.3f calls/denied, %.3f calls/admitted%n",
							algorithm.id(), cache ? "on" : "off", result.hotDecisions(),
							100.0 * result.hotDenied() / Math.max(1, result.hotDecisions()), result.scriptCalls(),
							result.admittingCalls() + result.denyingCalls(),
							result.callsPerDenied(), result.callsPerAdmitted());
				}
				Replay replay = replay(factory, probe, policy);
				replays.add(replay);
				System.out.printf(Locale.ROOT, "hot %-24s replay of %,d requests: %d differ; calls/denied %.3f off, %.3f on%n",
						algorithm.id(), replay.requests(),
						replay.differentAdmission() + replay.differentRemaining() + replay.differentRetryAfter(),
						replay.callsPerDeniedOff(), replay.callsPerDeniedOn());
			}
		}
		finally {
			factory.destroy();
		}
		return new Outcome(paced, replays);
	}

	/**
	 * A limiter as the starter makes it (guarded, here without time budget or breaker), with the denial cache or
	 * without: the one line that differs.
	 */
	private static DefaultRateLimiter limiter(RateLimitBackend backend, boolean denialCache) {
		DefaultRateLimiter.Builder builder = DefaultRateLimiter.builder(backend);
		if (denialCache) {
			builder.denialCache(RateLimitDenialCache.create(DENIAL_CACHE_SIZE));
		}
		return builder.build();
	}

	private static RedisRateLimitBackend backend(LettuceConnectionFactory factory, String prefix) {
		// one script call per decision the backend makes: what the cache saves is then counted call for call (natural
		// batching would fold concurrent decisions into fewer calls and blur the count)
		RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory).keyPrefix(prefix).batching(false).build();
		backend.connect();
		return backend;
	}

	private static String normal(long i) {
		return "user-" + (i % NORMAL_IDENTITIES);
	}

	private Paced paced(LettuceConnectionFactory factory, RedisProbe probe, RateLimitPolicy policy, boolean cache,
			Duration length) {
		RedisRateLimitBackend redis = backend(factory, "hot-paced-" + (cache ? "on" : "off") + ":");
		CountingBackend backend = new CountingBackend(redis);
		DefaultRateLimiter limiter = limiter(backend, cache);
		LongAdder hotDecisions = new LongAdder();
		LongAdder hotDenied = new LongAdder();
		LongAdder otherDecisions = new LongAdder();
		LongAdder otherDenied = new LongAdder();
		LongAdder undecided = new LongAdder();
		AtomicLong inFlight = new AtomicLong();
		// the hot identity and the others take turns: one request every 1 / (HOT_RATE + NORMAL_RATE) s
		long periodNanos = TimeUnit.SECONDS.toNanos(1) / (HOT_RATE + NORMAL_RATE);
		int hotEvery = (HOT_RATE + NORMAL_RATE) / HOT_RATE;
		long start = System.nanoTime();
		long measureFrom = start + this.leadIn.toNanos();
		long end = measureFrom + length.toNanos();
		RedisProbe.Snapshot before = null;
		long[] countersBefore = null;
		for (long i = 0;; i++) {
			long due = start + i * periodNanos;
			if (before == null && due >= measureFrom) {
				// the lead-in's calls answered first, so that the server's counters and the decisions start together
				drain(inFlight);
				before = probe.snapshot();
				countersBefore = new long[] { backend.admitting.sum(), backend.denying.sum() };
			}
			if (due >= end) {
				break;
			}
			long wait = due - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			boolean hot = (i % hotEvery) == 0;
			boolean measured = before != null;
			RateLimitRequest request = RateLimitRequest.of(policy, hot ? HOT : normal(i / hotEvery));
			inFlight.incrementAndGet();
			limiter.checkAsync(request).doFinally((signal) -> inFlight.decrementAndGet()).subscribe((decision) -> {
				if (!measured) {
					return;
				}
				if (!enforced(decision)) {
					undecided.increment();
				}
				(hot ? hotDecisions : otherDecisions).increment();
				if (!decision.allowed()) {
					(hot ? hotDenied : otherDenied).increment();
				}
			}, (error) -> {
				if (measured) {
					undecided.increment();
				}
			});
		}
		// the calls sent before the end are counted: their answers come before Redis' counters are read
		drain(inFlight);
		double seconds = (System.nanoTime() - measureFrom) / 1e9;
		RedisProbe.Snapshot after = probe.snapshot();
		redis.stop();
		return new Paced(policy.algorithm(), cache, seconds, hotDecisions.sum(), hotDenied.sum(), otherDecisions.sum(),
				otherDenied.sum(), scriptCalls(before, after), backend.admitting.sum() - countersBefore[0],
				backend.denying.sum() - countersBefore[1], undecided.sum());
	}

	private static void drain(AtomicLong inFlight) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (inFlight.get() > 0 && System.nanoTime() < deadline) {
			LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
		}
	}

	/** The server's script calls between two snapshots, whichever form the backend uses. */
	static long scriptCalls(RedisProbe.Snapshot before, RedisProbe.Snapshot after) {
		long calls = 0;
		for (String command : List.of("evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro")) {
			calls += after.callsSince(before, command);
		}
		return calls;
	}

	/** Whether Redis (or the cache, standing in for it) decided every policy: no failure mode. */
	private static boolean enforced(RateLimitDecision decision) {
		return decision.decisions().stream().noneMatch((d) -> d.enforcement().degraded());
	}

	/** The figures of one decision that must not change with the cache. */
	private record Seen(boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros,
			boolean enforced) {

		static Seen of(RateLimitDecision decision) {
			PolicyDecision deciding = decision.deciding().orElseThrow();
			return new Seen(decision.allowed(), deciding.remaining(), deciding.retryAfter().toNanos() / 1000,
					deciding.resetAfter().toNanos() / 1000, HotIdentityBenchmark.enforced(decision));
		}

	}

	private Replay replay(LettuceConnectionFactory factory, RedisProbe probe, RateLimitPolicy policy) {
		int requests = (int) (this.trace.toSeconds() * (HOT_RATE + NORMAL_RATE));
		long stepMicros = 1_000_000L / (HOT_RATE + NORMAL_RATE);
		int hotEvery = (HOT_RATE + NORMAL_RATE) / HOT_RATE;
		long base = System.currentTimeMillis() * 1000;
		List<RateLimitRequest> trace = new ArrayList<>(requests);
		for (int i = 0; i < requests; i++) {
			String identity = (i % hotEvery == 0) ? HOT : normal(i / hotEvery);
			trace.add(RateLimitRequest.builder().add(policy, identity).at(base + i * stepMicros).build());
		}
		Seen[] off = new Seen[requests];
		Seen[] on = new Seen[requests];
		RedisRateLimitBackend without = backend(factory, "hot-trace-off:");
		RedisRateLimitBackend with = backend(factory, "hot-trace-on:");
		long callsOff = replay(limiter(without, false), probe, trace, off);
		long callsOn = replay(limiter(with, true), probe, trace, on);
		without.stop();
		with.stop();
		int admission = 0;
		int remaining = 0;
		int retryAfter = 0;
		int resetAfter = 0;
		int notEnforced = 0;
		long largestGap = 0;
		long deniedOff = 0;
		long deniedOn = 0;
		String first = "";
		for (int i = 0; i < requests; i++) {
			Seen a = off[i];
			Seen b = on[i];
			deniedOff += a.allowed() ? 0 : 1;
			deniedOn += b.allowed() ? 0 : 1;
			notEnforced += (a.enforced() && b.enforced()) ? 0 : 1;
			admission += (a.allowed() != b.allowed()) ? 1 : 0;
			remaining += (a.remaining() != b.remaining()) ? 1 : 0;
			retryAfter += (a.retryAfterMicros() != b.retryAfterMicros()) ? 1 : 0;
			resetAfter += (a.resetAfterMicros() != b.resetAfterMicros()) ? 1 : 0;
			largestGap = Math.max(largestGap, Math.abs(a.retryAfterMicros() - b.retryAfterMicros()));
			if (first.isEmpty() && !a.equals(b)) {
				first = "request " + i + " (" + trace.get(i).entries().get(0).identity() + " at +"
						+ (i * stepMicros) + " µs): without " + a + ", with " + b;
			}
		}
		return new Replay(policy.algorithm(), requests, deniedOff, deniedOn, callsOff, callsOn, admission, remaining,
				retryAfter, largestGap, resetAfter, notEnforced, first);
	}

	private static long replay(DefaultRateLimiter limiter, RedisProbe probe, List<RateLimitRequest> trace,
			Seen[] figures) {
		RedisProbe.Snapshot before = probe.snapshot();
		for (int i = 0; i < trace.size(); i++) {
			figures[i] = Seen.of(limiter.check(trace.get(i)));
		}
		return scriptCalls(before, probe.snapshot());
	}

	/**
	 * A backend that passes every call to the real one and counts the acquisitions that reach it: those that
	 * answered an admission and those that answered a denial.
	 */
	private static final class CountingBackend implements RateLimitBackend {

		private final RateLimitBackend delegate;

		final LongAdder admitting = new LongAdder();

		final LongAdder denying = new LongAdder();

		CountingBackend(RateLimitBackend delegate) {
			this.delegate = delegate;
		}

		private Acquisition counted(Acquisition acquisition) {
			boolean admits = acquisition.decisions().stream().allMatch(PolicyDecision::allowed);
			(admits ? this.admitting : this.denying).increment();
			return acquisition;
		}

		@Override
		public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
			return this.delegate.acquire(request, requestId).map(this::counted);
		}

		@Override
		public Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId,
				List<Long> acquiredAtMicros, List<Long> sequences) {
			return this.delegate.release(entries, requestId, acquiredAtMicros, sequences);
		}

		@Override
		public List<PolicyDecision> inspect(RateLimitRequest request) {
			return this.delegate.inspect(request);
		}

		@Override
		public void reset(List<RateLimitRequest.Entry> entries) {
			this.delegate.reset(entries);
		}

		@Override
		public long resetMatching(String policyName, String identity) {
			return this.delegate.resetMatching(policyName, identity);
		}

		@Override
		public String kind() {
			return this.delegate.kind();
		}

	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		out.append("Hot identity: one identity at ").append(HOT_RATE).append(" requests per second against a limit of ")
			.append(LIMIT).append(" per second (10x), among ").append(NORMAL_IDENTITIES)
			.append(" other identities at one request per second each; denial cache of ").append(DENIAL_CACHE_SIZE)
			.append(" entries when on.\n\n");
		if (!DENIAL_CACHE_WIRED) {
			out.append("**The denial cache is not wired in this build** (`HotIdentityBenchmark.limiter`, marked"
					+ " `TODO denial cache`): the rows \"on\" ran the same limiter as \"off\".\n\n");
		}
		out.append("Paced on the real clock, non-blocking, through the guarded limiter (Redis calls from"
				+ " `INFO commandstats`; per denied request: the calls less one per admitted request, over the denied"
				+ " requests; per admitted request: the backend calls that answered an admission, over the admitted"
				+ " requests):\n\n");
		Markdown table = new Markdown("algorithm", "denial cache", "s", "hot requests", "hot denied", "others",
				"others denied", "Redis calls", "backend calls (its own count)", "calls per denied request", "<= 0.05", "calls answering a denial, per denied",
				"calls per admitted request", "no extra call", "not decided by Redis or the cache");
		for (Paced p : outcome.paced()) {
			table.row(p.algorithm().id(), p.cache() ? label() : "off", p.seconds(), p.hotDecisions(),
					percent(p.hotDenied(), p.hotDecisions()), p.otherDecisions(), p.otherDenied(), p.scriptCalls(),
					(p.admittingCalls() + p.denyingCalls()) + (p.countsAgree() ? "" : " **(disagrees)**"),
					String.format(Locale.ROOT, "%.3f", p.callsPerDenied()), (p.callsPerDenied() <= 0.05) ? "met" : "**not met**",
					String.format(Locale.ROOT, "%.3f", p.denyingCallsPerDenied()),
					String.format(Locale.ROOT, "%.3f", p.callsPerAdmitted()),
					(Math.abs(p.callsPerAdmitted() - 1.0) < 0.005) ? "met" : "**not met**", p.undecided());
		}
		out.append(table);
		long disagreeing = outcome.paced().stream().filter((p) -> !p.countsAgree()).count();
		if (disagreeing > 0) {
			out.append("\n**In ").append(disagreeing).append(" run(s) the server's script calls (`INFO commandstats`)"
					+ " disagree with the calls the backend made**: another client reached this redis-server or reset"
					+ " its statistics during the run. Those rows' Redis figures are not to be trusted: rerun on a"
					+ " quiet machine.\n");
		}
		out.append("\nThe same traffic replayed at explicit times, without the cache (key prefix `hot-trace-off:`) and"
				+ " with it (`hot-trace-on:`), every decision compared (the deciding policy's admission, remaining,"
				+ " retry-after and reset-after, in µs):\n\n");
		Markdown replays = new Markdown("algorithm", "requests", "denied without / with", "calls per denied without / with",
				"admission differs", "remaining differs", "retry-after differs (largest gap µs)", "reset-after differs",
				"not decided by Redis or the cache", "same decisions");
		for (Replay r : outcome.replays()) {
			boolean same = r.sameDecisions();
			replays.row(r.algorithm().id(), r.requests(), r.deniedOff() + " / " + r.deniedOn(),
					String.format(Locale.ROOT, "%.3f / %.3f", r.callsPerDeniedOff(), r.callsPerDeniedOn()),
					r.differentAdmission(), r.differentRemaining(),
					r.differentRetryAfter() + " (" + r.largestRetryAfterGapMicros() + ")", r.differentResetAfter(),
					r.notEnforced(), same ? "yes" : "**no**");
		}
		out.append(replays);
		outcome.replays()
			.stream()
			.filter((r) -> !r.firstDifference().isEmpty())
			.forEach((r) -> out.append("\nFirst difference, ").append(r.algorithm().id()).append(": ")
				.append(r.firstDifference()).append('\n'));
		out.append("\n`concurrency` is not measured: its permits come back at any time, so the cache never holds"
				+ " its denials.\n");
		out.append("\n\"Same decisions\" allows a retry-after 1 µs apart: the token bucket's refill is floating-point"
				+ " arithmetic, and a wait Redis computes again later can come out 1 µs longer than the one the cache"
				+ " counts down (the `Retry-After` and `RateLimit` headers carry whole seconds).\n");
		out.append("\nWhat bounds the figure: a cache that learned only from denials would send, per stretch in which"
				+ " the hot identity is denied, the first denial to Redis; where quota comes back a unit at a time"
				+ " (token bucket, GCRA) that is one call per k - 1 denials at k times the limit, 0.11 at 10x. The"
				+ " cache also learns from an admission that leaves no room for a request of cost 1 (Redis'"
				+ " single-policy scripts say the retry-after such a request would get right after it, for every"
				+ " algorithm here), so the denials after each admission never reach Redis: none at explicit times"
				+ " (the replay). Paced on the real clock, the cache's wait counts from when the call was sent and so"
				+ " ends earlier than Redis's by the call's latency, and requests sent while the admitting call is in"
				+ " flight reach Redis too: the paced figure grows with the latency, so with the machine's load.\n");
		return out.toString();
	}

	/**
	 * Records, per algorithm, the paced runs' calls per denied and per admitted request with the cache on, and
	 * whether the replay decided alike, for {@link Targets}.
	 */
	static void figures(Outcome outcome, Figures figures) {
		for (Paced p : outcome.paced()) {
			String at = "hot." + p.algorithm().id() + "." + (p.cache() ? "on" : "off") + ".";
			figures.put(at + "calls-per-denied", p.callsPerDenied())
				.put(at + "calls-per-admitted", p.callsPerAdmitted())
				.put(at + "counts-agree", p.countsAgree() ? 1 : 0);
		}
		for (Replay r : outcome.replays()) {
			figures.put("hot." + r.algorithm().id() + ".replay.same-decisions", r.sameDecisions() ? 1 : 0)
				.put("hot." + r.algorithm().id() + ".replay.requests", r.requests())
				.put("hot." + r.algorithm().id() + ".replay.calls-per-denied", r.callsPerDeniedOn());
		}
	}

	private static String label() {
		return DENIAL_CACHE_WIRED ? "on" : "on (not wired)";
	}

	private static String percent(long part, long whole) {
		return String.format(Locale.ROOT, "%.0f%%", 100.0 * part / Math.max(1, whole));
	}

}
