package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.stream.Stream;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisBinary;
import io.github.ratelimit.testkit.RedisClusterServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section {@code cluster}: what a decision costs a Redis Cluster, for sizing one. On a three-master Cluster of the
 * test kit's (no replicas, its own processes), through the engine (unguarded {@link DefaultRateLimiter} on a
 * Cluster-aware Spring Data Redis {@link LettuceConnectionFactory}), per algorithm: a non-blocking closed loop with
 * 64 calls in flight (or {@code -Dbench.cluster.inflight}) over 10,000 identities at random, every decision
 * admitted. Measured: the Redis CPU per decision ({@code INFO cpu} {@code used_cpu_sys + used_cpu_user} deltas summed over the masters,
 * over the decisions), the script calls per decision ({@code INFO commandstats}, summed), hence the decisions per
 * second one Redis core can serve. Each algorithm runs both paths in {@value #ROUNDS} rounds, their order alternating
 * (per call first, then batched first): per call (batching off, one script call per decision) and batched (natural
 * batching per master, the default); the sizing rule follows the batched figures.
 * Then requests whose entries span slots: two identities in different slots on
 * different masters (both admitted, and one denied, so the other is given back), beside two policies of one
 * identity (one slot).
 */
final class ClusterSizingBenchmark {

	/** Calls in flight: 64, the figure of issue #24; another to see how batches and Redis CPU follow the load. */
	static final int IN_FLIGHT = Integer.getInteger("bench.cluster.inflight", 64);

	/** The algorithms measured: all, or those whose codes {@code -Dbench.cluster.algorithms} lists (e.g. tb,gc). */
	static final List<Algorithm> ALGORITHMS = Stream.of(Algorithm.values())
		.filter((algorithm) -> List.of(System.getProperty("bench.cluster.algorithms", algorithm.code()).split(","))
			.contains(algorithm.code()))
		.toList();

	/** Rounds per algorithm, each measuring both paths, in alternating order. */
	static final int ROUNDS = 2;

	static final int IDENTITIES = 10_000;

	/** The Cluster throughput the sizing is asked for. */
	static final double TARGET_DECISIONS_PER_SECOND = 500_000;

	/** The share of a core a master is planned to use: the rest is headroom. */
	static final double PLANNED_UTILISATION = 0.5;

	private final Duration settle;

	private final Duration measure;

	/** The backends made, stopped at the end. */
	private final List<RedisRateLimitBackend> backends = new ArrayList<>();

	ClusterSizingBenchmark(boolean quick) {
		this.settle = Duration.ofSeconds(quick ? 1 : 2);
		this.measure = Duration.ofSeconds(quick ? 2 : 5);
	}

	/** One load's measurement. */
	record Row(String load, double decisionsPerSecond, long decisions, double redisCpuMicrosPerDecision,
			double[] cpuShareByMaster, double callsPerDecision, double deniedShare, long errors) {

		double decisionsPerCore() {
			return 1e6 / this.redisCpuMicrosPerDecision;
		}

	}

	/**
	 * The figures of one run.
	 * @param algorithms per algorithm, batched (the default)
	 * @param perCall per algorithm, batching off
	 */
	record Outcome(String redisVersion, int masters, double idleCpuMicrosPerSecond, List<Row> algorithms,
			List<Row> perCall, List<Row> spanning) {
	}

	Outcome run() throws InterruptedException {
		List<Row> algorithms = new ArrayList<>();
		List<Row> perCall = new ArrayList<>();
		List<Row> spanning = new ArrayList<>();
		try (RedisClusterServer cluster = RedisClusterServer.start()) {
			List<HostAndPort> masters = cluster.masters();
			List<RedisProbe> probes = masters.stream().map((master) -> new RedisProbe(master.uri())).toList();
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisClusterConfiguration(masters.stream().map(HostAndPort::toString).toList()));
			factory.afterPropertiesSet();
			factory.start();
			try {
				double idle = idleCpuMicrosPerSecond(probes);
				for (Algorithm algorithm : ALGORITHMS) {
					RateLimitPolicy policy = open("sizing-" + algorithm.code(), algorithm);
					String load = algorithm.id() + (algorithm == Algorithm.CONCURRENCY ? " (acquire + release)" : "");
					// the two paths alternate in rounds (per call first, then batched first): the same conditions
					List<DefaultRateLimiter> limiters = List.of(
							limiter(factory, "cl-" + algorithm.code() + "false:", false),
							limiter(factory, "cl-" + algorithm.code() + "true:", true));
					List<List<Row>> rounds = List.of(new ArrayList<>(), new ArrayList<>());
					for (int round = 0; round < ROUNDS; round++) {
						for (int k = 0; k < 2; k++) {
							int path = (round % 2 == 0) ? k : 1 - k;
							Row row = measure(load, limiters.get(path), probes,
									(i) -> RateLimitRequest.of(policy, "user-" + i));
							rounds.get(path).add(row);
							System.out.print((path == 1) ? "batched  " : "per call ");
							print(row);
						}
					}
					perCall.add(merge(rounds.get(0)));
					algorithms.add(merge(rounds.get(1)));
				}
				RateLimitPolicy first = open("span-a", Algorithm.TOKEN_BUCKET);
				RateLimitPolicy second = open("span-b", Algorithm.TOKEN_BUCKET);
				RateLimitPolicy closed = RateLimitPolicy.builder("span-closed")
					.algorithm(Algorithm.TOKEN_BUCKET)
					.limit(1)
					.window(Duration.ofHours(1))
					.build();
				RateLimitKeys keys = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);
				String[] partners = new String[IDENTITIES];
				for (int i = 0; i < IDENTITIES; i++) {
					partners[i] = partner(cluster, keys, first, "user-" + i);
				}
				DefaultRateLimiter oneSlot = limiter(factory, "cl-one:", true);
				spanning.add(print(measure("one identity, two policies (one slot)", oneSlot, probes,
						(i) -> RateLimitRequest.builder().add(first, "user-" + i).add(second, "user-" + i).build())));
				DefaultRateLimiter twoSlots = limiter(factory, "cl-two:", true);
				spanning.add(print(measure("two identities on two masters, both admitted", twoSlots, probes,
						(i) -> RateLimitRequest.builder().add(first, "user-" + i).add(second, partners[i]).build())));
				DefaultRateLimiter denied = limiter(factory, "cl-denied:", true);
				for (String partner : partners) {
					denied.check(RateLimitRequest.of(closed, partner)); // its one request of the hour
				}
				spanning.add(print(measure("two identities on two masters, the second denied (the first given back)",
						denied, probes,
						(i) -> RateLimitRequest.builder().add(first, "user-" + i).add(closed, partners[i]).build())));
				return new Outcome(RedisBinary.get().version().toString(), masters.size(), idle, algorithms, perCall, spanning);
			}
			finally {
				this.backends.forEach(RedisRateLimitBackend::stop);
				factory.destroy();
				probes.forEach(RedisProbe::close);
			}
		}
	}

	private static RateLimitPolicy open(String name, Algorithm algorithm) {
		// sliding-window-log and concurrency keep one entry per request and accept at most 100,000 per window
		boolean entries = algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.CONCURRENCY;
		return RateLimitPolicy.builder(name)
			.algorithm(algorithm)
			.limit(entries ? RateLimitPolicy.MAX_ENTRY_LIMIT : RateLimitPolicy.MAX_LIMIT)
			.window(Duration.ofMinutes(1))
			.build();
	}

	private DefaultRateLimiter limiter(LettuceConnectionFactory factory, String prefix, boolean batching) {
		RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory)
			.keyPrefix(prefix)
			.batching(batching)
			.build();
		this.backends.add(backend);
		backend.connect();
		return new DefaultRateLimiter(backend);
	}

	/**
	 * An identity whose keys live on another master than {@code identity}'s (a key's slot is its identity's: the
	 * identity is the key's hash tag, whatever the policy and prefix).
	 */
	private static String partner(RedisClusterServer cluster, RateLimitKeys keys, RateLimitPolicy policy,
			String identity) {
		HostAndPort master = cluster.masterForKey(keys.key(policy, identity));
		for (int n = 0;; n++) {
			String candidate = identity + "-p" + n;
			if (!cluster.masterForKey(keys.key(policy, candidate)).equals(master)) {
				return candidate;
			}
		}
	}

	/** The masters' CPU while nothing is sent (cluster bus, cron), per second, summed. */
	private double idleCpuMicrosPerSecond(List<RedisProbe> probes) throws InterruptedException {
		List<RedisProbe.Snapshot> before = probes.stream().map(RedisProbe::snapshot).toList();
		long start = System.nanoTime();
		Thread.sleep(this.settle.toMillis());
		double seconds = (System.nanoTime() - start) / 1e9;
		double micros = 0;
		for (int m = 0; m < probes.size(); m++) {
			micros += probes.get(m).snapshot().cpuMicrosSince(before.get(m));
		}
		return micros / seconds;
	}

	private Row measure(String load, DefaultRateLimiter limiter, List<RedisProbe> probes,
			IntFunction<RateLimitRequest> requests) throws InterruptedException {
		List<RedisProbe.Snapshot> before = new ArrayList<>();
		List<RedisProbe.Snapshot> after = new ArrayList<>();
		ClosedLoop.Call call = new ClosedLoop.Call() {

			@Override
			public boolean blocking(int key) {
				RateLimitDecision decision = limiter.check(requests.apply(key));
				decision.permit().release();
				return decision.allowed();
			}

			@Override
			public CompletableFuture<Boolean> async(int key) {
				return limiter.checkAsync(requests.apply(key))
					.flatMap((decision) -> decision.permit().releaseAsync().thenReturn(decision.allowed()))
					.toFuture();
			}

		};
		ClosedLoop.Counts counts = ClosedLoop.run(call, IDENTITIES, false, IN_FLIGHT, this.settle, this.measure,
				() -> probes.forEach((probe) -> before.add(probe.snapshot())),
				() -> probes.forEach((probe) -> after.add(probe.snapshot())));
		double[] cpu = new double[probes.size()];
		double totalCpu = 0;
		long calls = 0;
		for (int m = 0; m < probes.size(); m++) {
			cpu[m] = after.get(m).cpuMicrosSince(before.get(m));
			totalCpu += cpu[m];
			calls += HotIdentityBenchmark.scriptCalls(before.get(m), after.get(m));
		}
		for (int m = 0; m < cpu.length; m++) {
			cpu[m] = (totalCpu == 0) ? 0 : cpu[m] / totalCpu;
		}
		long decisions = Math.max(1, counts.decisions());
		return new Row(load, counts.perSecond(), counts.decisions(), totalCpu / decisions, cpu,
				(double) calls / decisions, counts.deniedShare(), counts.errors());
	}

	/** The rounds of one path as one row: totals over the rounds (decisions/s their mean). */
	static Row merge(List<Row> rounds) {
		long decisions = 0;
		double cpu = 0;
		double calls = 0;
		double denied = 0;
		double perSecond = 0;
		long errors = 0;
		double[] shares = new double[rounds.get(0).cpuShareByMaster().length];
		for (Row row : rounds) {
			decisions += row.decisions();
			cpu += row.redisCpuMicrosPerDecision() * row.decisions();
			calls += row.callsPerDecision() * row.decisions();
			denied += row.deniedShare() * row.decisions();
			perSecond += row.decisionsPerSecond() / rounds.size();
			errors += row.errors();
			for (int m = 0; m < shares.length; m++) {
				shares[m] += row.cpuShareByMaster()[m] / rounds.size();
			}
		}
		long total = Math.max(1, decisions);
		return new Row(rounds.get(0).load(), perSecond, decisions, cpu / total, shares, calls / total,
				denied / total, errors);
	}

	private static Row print(Row row) {
		System.out.printf(Locale.ROOT, "cluster %-72s %,8.0f decisions/s %6.1f µs Redis CPU/decision %.2f calls/decision%n",
				row.load(), row.decisionsPerSecond(), row.redisCpuMicrosPerDecision(), row.callsPerDecision());
		return row;
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		out.append("Cluster sizing: ").append(outcome.masters()).append(" masters (no replicas), redis-server ")
			.append(outcome.redisVersion()).append(", on the same ").append(Runtime.getRuntime().availableProcessors())
			.append(" cores as the client; a non-blocking closed loop with ").append(IN_FLIGHT)
			.append(" calls in flight over ").append(String.format(Locale.ROOT, "%,d", IDENTITIES))
			.append(" identities at random, every decision admitted. Redis CPU is `used_cpu_sys + used_cpu_user`"
					+ " summed over the masters (`INFO cpu`), including the masters' idle work (")
			.append(String.format(Locale.ROOT, "%,.0f", outcome.idleCpuMicrosPerSecond()))
			.append(" µs per second together while nothing was sent).\n\n");
		Markdown table = new Markdown("algorithm", "path", "decisions/s", "Redis CPU µs per decision (all masters)",
				"share per master", "script calls per decision", "decisions/s per Redis core", "denied", "errors");
		for (int a = 0; a < outcome.algorithms().size(); a++) {
			for (Row row : List.of(outcome.perCall().get(a), outcome.algorithms().get(a))) {
				table.row(row.load(), (row == outcome.perCall().get(a)) ? "per call" : "batched",
						row.decisionsPerSecond(), row.redisCpuMicrosPerDecision(), shares(row), row.callsPerDecision(),
						row.decisionsPerCore(), Figures.percent(row.deniedShare()), row.errors());
			}
		}
		out.append(table);
		out.append("\nBatched against per call, measured in this run in " + ROUNDS + " rounds whose order alternates"
				+ " (per call first, then batched first), totals over the rounds:\n\n");
		Markdown versus = new Markdown("algorithm", "Redis CPU per decision, batched / per call",
				"decisions/s, batched / per call");
		for (int a = 0; a < outcome.algorithms().size(); a++) {
			Row batched = outcome.algorithms().get(a);
			Row perCall = outcome.perCall().get(a);
			versus.row(batched.load(),
					Figures.percent(batched.redisCpuMicrosPerDecision() / perCall.redisCpuMicrosPerDecision()),
					Figures.percent(batched.decisionsPerSecond() / perCall.decisionsPerSecond()));
		}
		out.append(versus);
		out.append("\nRequests with two entries (token bucket):\n\n");
		Markdown span = new Markdown("request", "decisions/s", "Redis CPU µs per decision", "script calls per decision",
				"denied", "errors");
		for (Row row : outcome.spanning()) {
			span.row(row.load(), row.decisionsPerSecond(), row.redisCpuMicrosPerDecision(), row.callsPerDecision(),
					Figures.percent(row.deniedShare()), row.errors());
		}
		out.append(span);
		out.append("\n**Sizing rule** (from the batched figures): a master serves about 10^6 / (Redis CPU µs per decision)"
				+ " decisions per second per core it uses; Redis runs commands on one thread, so a master is one core."
				+ " The batched figures assume each instance keeps about " + IN_FLIGHT + " calls in flight over the"
				+ " masters (here about " + IN_FLIGHT / 3 + " per master): a batch holds only what one instance has in"
				+ " flight to one master, so many lightly loaded instances approach the per-call cost. Plan with the"
				+ " per-call figures unless each instance is busy. Planned at ")
			.append(Figures.percent(PLANNED_UTILISATION))
			.append(" of a core (headroom for spikes, a failover's extra load and the fork of a persistence"
					+ " snapshot), masters for ")
			.append(String.format(Locale.ROOT, "%,.0f", TARGET_DECISIONS_PER_SECOND))
			.append(" decisions per second = ")
			.append(String.format(Locale.ROOT, "%,.0f", TARGET_DECISIONS_PER_SECOND))
			.append(" / (decisions/s per core x ")
			.append(PLANNED_UTILISATION)
			.append("), rounded up:\n\n");
		Markdown sizing = new Markdown("algorithm", "decisions/s per core", "arithmetic", "masters");
		for (Row row : outcome.algorithms()) {
			double perCore = row.decisionsPerCore();
			double exact = TARGET_DECISIONS_PER_SECOND / (perCore * PLANNED_UTILISATION);
			sizing.row(row.load(), perCore,
					String.format(Locale.ROOT, "%,.0f / (%,.0f x %.1f) = %.1f", TARGET_DECISIONS_PER_SECOND, perCore,
							PLANNED_UTILISATION, exact),
					(long) Math.ceil(exact));
		}
		out.append(sizing);
		out.append("\nA request whose entries span slots costs one script call per slot (and one more per slot that"
				+ " admitted when another denied: its give-back); Redis CPU per decision follows the calls.\n");
		return out.toString();
	}

	/** Records decisions per second per core and the masters for the target, per algorithm, for {@link Targets}. */
	static void figures(Outcome outcome, Figures figures) {
		putAlgorithms(figures, "cluster.", outcome.algorithms());
		putAlgorithms(figures, "cluster.per-call.", outcome.perCall());
		for (Row row : outcome.spanning()) {
			figures.put("cluster.spanning." + Figures.part(row.load()) + ".calls", row.callsPerDecision());
		}
		figures.put("cluster.masters", outcome.masters()).put("cluster.utilisation", PLANNED_UTILISATION);
	}

	private static void putAlgorithms(Figures figures, String prefix, List<Row> rows) {
		for (Row row : rows) {
			String at = prefix + Figures.part(row.load()) + ".";
			figures.put(at + "per-core", row.decisionsPerCore())
				.put(at + "redis-cpu-micros", row.redisCpuMicrosPerDecision())
				.put(at + "masters",
						Math.ceil(TARGET_DECISIONS_PER_SECOND / (row.decisionsPerCore() * PLANNED_UTILISATION)));
		}
	}

	private static String shares(Row row) {
		List<String> shares = new ArrayList<>();
		for (double share : row.cpuShareByMaster()) {
			shares.add(Figures.percent(share));
		}
		return String.join(" / ", shares);
	}

}
