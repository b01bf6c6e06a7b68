package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.benchmarks.http.BenchmarkApplication;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Section {@code lease}: leased quotas over HTTP, two applications on one {@code redis-server}, each loaded by a wrk
 * of its own at the same time. Throughput: limiter off, exact (every decision a Redis call) and leased, one global
 * token bucket that admits everything. Then the limit's bound and the load moving between the instances: a global
 * fixed window of {@value #LIMIT} per second, both instances loaded, then only the first, then only the second;
 * every admission counted in the Redis window it was decided in ({@link WindowCounting}).
 */
final class LeaseBenchmark {

	static final List<String> CONFIGURATIONS = List.of("limiter off", "exact", "leased");

	/** The fixed window's limit per second in the bound and move runs: below what wrk offers. */
	static final long LIMIT = 2_000;

	private static final List<String> SCRIPT_COMMANDS = List.of("evalsha", "eval", "fcall", "fcall_ro");

	private final int seconds;

	private final int phaseSeconds;

	private final int rounds = Integer.getInteger("bench.lease.rounds", 2);

	private final int warmUpSeconds;

	LeaseBenchmark(boolean quick) {
		this.seconds = Integer.getInteger("bench.wrk.seconds", quick ? 2 : 10);
		this.phaseSeconds = quick ? 2 : 4;
		this.warmUpSeconds = Integer.getInteger("bench.lease.warmup.seconds", quick ? 2 : 6);
	}

	/** Both instances' wrk runs together: requests per second summed, latencies the mean of the two. */
	record Row(String configuration, int round, long requests, double requestsPerSecond, double p50, double p99,
			long non2xx, double redisCallsPerRequest, double appCpuMicros, double redisCpuMicros) {
	}

	/**
	 * One bound and move run: admissions per window of one second.
	 * @param configuration exact or leased
	 * @param windows admissions by window, in order, from the first window the run touched to the last
	 * @param moveWindow the window in which load moved from the first instance to the second
	 */
	record Move(String configuration, TreeMap<Long, Long> windows, long moveWindow) {

		long largest() {
			return this.windows.values().stream().mapToLong(Long::longValue).max().orElse(0);
		}

		long atMove() {
			return this.windows.getOrDefault(this.moveWindow, 0L);
		}

		/** The smallest count of the windows wholly inside the run (not its first or last). */
		long smallestInside() {
			return this.windows.values().stream().skip(1).limit(Math.max(0, this.windows.size() - 2))
				.mapToLong(Long::longValue).min().orElse(0);
		}

	}

	record Outcome(WrkBinary wrk, int seconds, List<Row> rows, List<Move> moves) {
	}

	Outcome run() throws IOException, InterruptedException {
		WrkBinary wrk = WrkBinary.find();
		List<Row> rows = new ArrayList<>();
		List<Move> moves = new ArrayList<>();
		Outcome outcome = new Outcome(wrk, this.seconds, rows, moves);
		if (!wrk.available()) {
			System.out.println("lease: skipped, wrk is not available: " + wrk.version());
			return outcome;
		}
		try (RedisServer redis = RedisServer.start(); RedisProbe probe = new RedisProbe(redis.uri())) {
			for (int round = 0; round <= this.rounds; round++) {
				for (String configuration : configurations()) {
					Row row = throughput(wrk, probe, redis, configuration, round);
					if (row != null) {
						rows.add(row);
						System.out.printf(Locale.ROOT, "lease %-12s round %d %,9.0f req/s p50 %6.0f us p99 %6.0f us"
								+ " %.4f Redis calls per request, CPU per request: applications %.1f us, Redis %.1f us%n",
								configuration, round, row.requestsPerSecond(), row.p50(), row.p99(),
								row.redisCallsPerRequest(), row.appCpuMicros(), row.redisCpuMicros());
					}
				}
			}
			for (String configuration : List.of("exact", "leased")) {
				// -Dbench.lease.moves=false: throughput only (a profile of the throughput runs alone)
				if (!configurations().contains(configuration)
						|| !Boolean.parseBoolean(System.getProperty("bench.lease.moves", "true"))) {
					continue;
				}
				Move move = move(wrk, redis, configuration);
				moves.add(move);
				System.out.printf(Locale.ROOT, "lease %-12s largest window %d of %d, at the move %d%n", configuration,
						move.largest(), LIMIT, move.atMove());
			}
		}
		return outcome;
	}

	/** The configurations to run: all, or those {@code -Dbench.lease.configurations} names (comma separated). */
	private static List<String> configurations() {
		String only = System.getProperty("bench.lease.configurations");
		return (only == null) ? CONFIGURATIONS
				: CONFIGURATIONS.stream().filter((name) -> List.of(only.split(",")).stream().anyMatch(name::contains)).toList();
	}

	/** Two applications loaded at once; null for the warm-up round (0). */
	private Row throughput(WrkBinary wrk, RedisProbe probe, RedisServer redis, String configuration, int round)
			throws IOException, InterruptedException {
		String[] args = arguments(redis, configuration, "token-bucket", 1_000_000_000L, "1m");
		try (ConfigurableApplicationContext first = start(args, false);
				ConfigurableApplicationContext second = start(args, false)) {
			List<URI> both = List.of(HttpBenchmark.endpoint(first), HttpBenchmark.endpoint(second));
			// warm-up, not reported: each round's applications are new contexts whose generated classes (proxies,
			// lambdas) the JIT compiles anew; 2 s left the first measured round at half the second's throughput
			wrk(wrk, both, this.warmUpSeconds);
			if (round == 0) {
				return null;
			}
			RedisProbe.Snapshot before = probe.snapshot();
			long cpuBefore = LoadDriver.processCpuNanos();
			List<WrkBenchmark.Row> runs = wrk(wrk, both, this.seconds).stream()
				.map((output) -> WrkBenchmark.parse(configuration, round, output))
				.toList();
			long cpuAfter = LoadDriver.processCpuNanos();
			RedisProbe.Snapshot after = probe.snapshot();
			long calls = SCRIPT_COMMANDS.stream().mapToLong((command) -> after.callsSince(before, command)).sum();
			long requests = runs.stream().mapToLong(WrkBenchmark.Row::requests).sum();
			return new Row(configuration, round, requests,
					runs.stream().mapToDouble(WrkBenchmark.Row::requestsPerSecond).sum(),
					runs.stream().mapToDouble(WrkBenchmark.Row::p50).average().orElse(0),
					runs.stream().mapToDouble(WrkBenchmark.Row::p99).average().orElse(0),
					runs.stream().mapToLong(WrkBenchmark.Row::non2xx).sum(), (double) calls / Math.max(1, requests),
					(cpuAfter - cpuBefore) / 1000.0 / Math.max(1, requests),
					after.cpuMicrosSince(before) / Math.max(1, requests));
		}
	}

	/** Both instances loaded, then the first alone, then the second alone; admissions counted per window. */
	private Move move(WrkBinary wrk, RedisServer redis, String configuration)
			throws IOException, InterruptedException {
		String[] args = arguments(redis, configuration, "fixed-window", LIMIT, "1s");
		try (ConfigurableApplicationContext first = start(args, true);
				ConfigurableApplicationContext second = start(args, true)) {
			URI one = HttpBenchmark.endpoint(first);
			URI two = HttpBenchmark.endpoint(second);
			wrk(wrk, List.of(one, two), 2); // warm-up, not counted
			Thread.sleep(1_500); // the warm-up's windows end and its slices are given back
			WindowCounting.ADMITTED.clear();
			wrk(wrk, List.of(one, two), this.phaseSeconds);
			wrk(wrk, List.of(one), this.phaseSeconds);
			long moveWindow = System.currentTimeMillis() / 1000;
			wrk(wrk, List.of(two), this.phaseSeconds);
			TreeMap<Long, Long> windows = new TreeMap<>();
			WindowCounting.ADMITTED.forEach((window, count) -> windows.put(window, count.sum()));
			return new Move(configuration, windows, moveWindow);
		}
	}

	private static String[] arguments(RedisServer redis, String configuration, String algorithm, long limit,
			String window) {
		List<String> args = new ArrayList<>(List.of("--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.policies.bench.algorithm=" + algorithm,
				"--ratelimit.policies.bench.limit=" + limit, "--ratelimit.policies.bench.window=" + window,
				"--ratelimit.policies.bench.key=global", "--ratelimit.policies.bench.failure-mode=closed",
				"--ratelimit.filter.rules[0].paths=/bench", "--ratelimit.filter.rules[0].policies=bench",
				"--ratelimit.top.enabled=false"));
		// -Dbench.lease.args: more application arguments for every configuration, separated by ";" (an experiment's)
		String more = System.getProperty("bench.lease.args", "").trim();
		if (!more.isEmpty()) {
			args.addAll(List.of(more.split(";")));
		}
		switch (configuration) {
			case "limiter off" -> args.add("--ratelimit.enabled=false");
			case "leased" -> args.add("--ratelimit.policies.bench.lease.enabled=true");
			default -> {
			}
		}
		return args.toArray(String[]::new);
	}

	/** The one-endpoint application; with the window counting observer when counting. */
	private static ConfigurableApplicationContext start(String[] args, boolean counting) {
		SpringApplication application = counting
				? new SpringApplication(BenchmarkApplication.class, WindowCounting.class)
				: new SpringApplication(BenchmarkApplication.class);
		// -Dbench.lease.web=reactive: the same runs on WebFlux (Netty) instead of the servlet stack (Tomcat)
		application.setWebApplicationType("reactive".equals(System.getProperty("bench.lease.web"))
				? WebApplicationType.REACTIVE : WebApplicationType.SERVLET);
		List<String> all = new ArrayList<>(List.of(args));
		all.addAll(List.of("--server.port=0", "--logging.level.root=WARN", "--spring.main.banner-mode=off"));
		return application.run(all.toArray(String[]::new));
	}

	/** One wrk per address at the same time ({@code -t1 -c8} each), waited for: their reports. */
	private static List<String> wrk(WrkBinary wrk, List<URI> addresses, int seconds)
			throws IOException, InterruptedException {
		List<Process> processes = new ArrayList<>();
		for (URI address : addresses) {
			processes.add(new ProcessBuilder(wrk.command(), "-t1", "-c8", "-d" + seconds + "s", "--latency",
					address.toString())
				.redirectErrorStream(true)
				.start());
		}
		List<String> outputs = new ArrayList<>();
		for (Process process : processes) {
			outputs.add(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
			if (!process.waitFor(seconds + 30L, TimeUnit.SECONDS) || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new IllegalStateException("wrk failed:\n" + outputs.get(outputs.size() - 1));
			}
		}
		return outputs;
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		if (outcome.rows().isEmpty()) {
			return out.append("Skipped: wrk is not available here (").append(outcome.wrk().version()).append(").\n")
				.toString();
		}
		out.append(String.format(Locale.ROOT, "`%s` (%s). Two applications (Tomcat, one JVM) on one `redis-server`,"
				+ " each loaded by a `wrk -t1 -c8 -d%ds --latency` of its own at the same time; wrk, the applications"
				+ " and Redis share the machine's %d cores (and, when this ran, other engineers' work: compare the"
				+ " rows of one run). One global token bucket admitting everything (limit 10^9 per minute): limiter"
				+ " off, exact (a Redis call per decision: an instance's 8 requests in flight fit in the calls a"
				+ " connection keeps in flight, so none is batched), leased (`lease.enabled=true`, the defaults). A"
				+ " warm-up round first, and each round's new applications warmed up before they are measured"
				+ " (`-Dbench.lease.warmup.seconds`, 6 s; neither reported). Requests per second summed over both"
				+ " wrk runs, latencies the mean of the two; Redis calls: the script calls `redis-server` counted"
				+ " over the requests. CPU per request: the applications' JVM (both applications and this"
				+ " benchmark's idle driver) and `redis-server`, each over the requests of the run.%n%n",
				outcome.wrk().version(), outcome.wrk().origin(), outcome.seconds(),
				Runtime.getRuntime().availableProcessors()));
		Markdown table = new Markdown("configuration", "round", "requests/s", "vs off", "p50 µs", "p99 µs",
				"non-2xx", "Redis calls per request", "app CPU µs per request", "Redis CPU µs per request");
		for (Row row : outcome.rows()) {
			table.row(row.configuration(), row.round(), row.requestsPerSecond(),
					String.format(Locale.ROOT, "%.0f%%", 100 * row.requestsPerSecond() / off(outcome, row.round())),
					row.p50(), row.p99(), row.non2xx(), String.format(Locale.ROOT, "%.4f", row.redisCallsPerRequest()),
					String.format(Locale.ROOT, "%.1f", row.appCpuMicros()),
					String.format(Locale.ROOT, "%.1f", row.redisCpuMicros()));
		}
		out.append(table).append(String.format(Locale.ROOT, "%nThe limit and the load moving: a global fixed window"
				+ " of %d per second (failure mode closed), both applications loaded, then the first alone, then"
				+ " the second alone, each phase one wrk run; every admission counted in the second of the Redis"
				+ " clock it was decided in. Under-admission at the move: the limit less what the window in which"
				+ " the load moved admitted (the gap between two wrk runs falls in it too, for both).%n%n", LIMIT));
		Markdown bound = new Markdown("configuration", "windows", "largest window", "limit", "smallest inside",
				"at the move", "under-admission at the move");
		for (Move move : outcome.moves()) {
			bound.row(move.configuration(), move.windows().size(), move.largest(), LIMIT, move.smallestInside(),
					move.atMove(), LIMIT - move.atMove());
		}
		return out.append(bound).toString();
	}

	private static double off(Outcome outcome, int round) {
		return outcome.rows().stream()
			.filter((row) -> row.round() == round && row.configuration().equals("limiter off"))
			.mapToDouble(Row::requestsPerSecond)
			.findFirst()
			.orElse(1);
	}

	static void figures(Outcome outcome, Figures figures) {
		if (outcome.rows().isEmpty()) {
			return;
		}
		double off = mean(outcome, "limiter off");
		figures.put("lease.exact.vs-off", mean(outcome, "exact") / off)
			.put("lease.leased.vs-off", mean(outcome, "leased") / off);
		for (Move move : outcome.moves()) {
			figures.put("lease." + move.configuration() + ".largest-window", move.largest())
				.put("lease." + move.configuration() + ".under-admission", LIMIT - move.atMove());
		}
	}

	private static double mean(Outcome outcome, String configuration) {
		return outcome.rows().stream()
			.filter((row) -> row.configuration().equals(configuration))
			.mapToDouble(Row::requestsPerSecond)
			.average()
			.orElse(0);
	}

}
