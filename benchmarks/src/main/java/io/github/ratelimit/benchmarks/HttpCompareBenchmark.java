package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import io.github.ratelimit.benchmarks.http.BenchmarkApplication;
import io.github.ratelimit.testkit.RedisServer;

/**
 * Section 4c ({@code http-compare}): the HTTP cost of the limiter against the bucket4j Spring Boot starter, and of
 * this build against an earlier one, under wrk. Every contender is an application in a JVM of its own
 * ({@link ServerProcess}) serving {@code /bench}: ours on Tomcat (servlet) and on Netty (WebFlux), each with the
 * limiter off, on the local backend and on Redis; the bucket4j starter's application on Spring Boot 3.5
 * ({@code benchmarks/bucket4j-app}, built apart: the starter does not run on Spring Boot 4) off and on its Lettuce
 * backend; an earlier build of this module's jar when {@code -Dbench.compare.baseline} names one. Two loads: every
 * request admitted (a limit no run reaches), and half denied (wrk alternates {@code /bench} and
 * {@code /bench/denied}, whose limit of one per hour is spent at once). Rounds, the contenders' order rotated per
 * round; per run a fresh JVM, a warm-up with wrk until the JIT has settled ({@link #warmUp}), the measured run, the
 * application's CPU per request, Redis' commands and CPU from {@code INFO}.
 */
final class HttpCompareBenchmark {

	/** The file the section writes. */
	static final String FILE = "http-compare.md";

	private static final String MAIN = BenchmarkApplication.class.getName();

	/** Alternates the admitted and the denied path, per wrk thread. */
	private static final String HALF_DENIED_SCRIPT = """
			local n = 0
			request = function()
			  n = n + 1
			  if n % 2 == 0 then return wrk.format("GET", "/bench/denied") end
			  return wrk.format("GET", "/bench")
			end
			""";

	private final int seconds;

	private final Warmup warmup;

	private final int rounds = Integer.getInteger("bench.compare.rounds", 2);

	private final int threads = Integer.getInteger("bench.wrk.threads", 2);

	private final int connections = Integer.getInteger("bench.wrk.connections", HttpBenchmark.CONNECTIONS);

	HttpCompareBenchmark(boolean quick) {
		this.seconds = Integer.getInteger("bench.wrk.seconds", quick ? 2 : 10);
		int shortest = Integer.getInteger("bench.compare.warmup", quick ? 2 : 20);
		int max = Integer.getInteger("bench.compare.warmup.max", quick ? 4 : 120);
		if (max < shortest) {
			System.out.printf(Locale.ROOT, "http-compare: bench.compare.warmup.max (%d s) is below bench.compare.warmup"
					+ " (%d s): every warm-up lasts %d s%n", max, shortest, shortest);
		}
		this.warmup = new Warmup(shortest, quick ? 1 : 5, Math.max(max, shortest));
	}

	/**
	 * One application under one load.
	 * @param name how the tables name it
	 * @param off the contender whose throughput it is compared with (the same stack, limiter off)
	 * @param halfDenied whether wrk alternates the admitted and the denied path
	 * @param command the java command and the application's arguments (the port is added)
	 */
	record Contender(String name, String off, boolean halfDenied, List<String> command) {
	}

	/**
	 * One measured run.
	 * @param contender the contender's name
	 * @param round the round
	 * @param wrk wrk's figures
	 * @param redisCommands the commands Redis counted during the run ({@code INFO} itself excepted)
	 * @param redisCpuMicros Redis' CPU time during the run
	 * @param appCpuMicros the application process's CPU time during the run (its JIT and GC included)
	 * @param warmupSeconds how long the warm-up before the run lasted
	 */
	record Row(String contender, int round, WrkBenchmark.Row wrk, long redisCommands, double redisCpuMicros,
			double appCpuMicros, int warmupSeconds) {

		double perRequest(double value) {
			return value / Math.max(1, this.wrk.requests());
		}

	}

	/**
	 * What the section measured.
	 * @param wrk the wrk used
	 * @param command the measured wrk command line
	 * @param contenders the contenders, in the first round's order
	 * @param rows the measured runs
	 * @param load the machine's load average before and after the section
	 * @param warmup how each JVM was warmed up
	 */
	record Outcome(WrkBinary wrk, String command, List<Contender> contenders, List<Row> rows, String load,
			Warmup warmup) {
	}

	/**
	 * How a fresh JVM is warmed up, in seconds ({@link #warmUp}).
	 * @param shortest the shortest warm-up
	 * @param step the length of one step
	 * @param longest the longest: a JVM whose CPU per request still falls then is measured anyway
	 */
	record Warmup(int shortest, int step, int longest) {
	}

	Outcome run() throws IOException, InterruptedException {
		WrkBinary wrk = WrkBinary.find();
		String command = String.format(Locale.ROOT, "wrk -t%d -c%d -d%ds --latency", this.threads, this.connections,
				this.seconds);
		if (!wrk.available()) {
			System.out.println("http-compare: skipped, wrk is not available: " + wrk.version());
			return new Outcome(wrk, command, List.of(), List.of(), "", this.warmup);
		}
		String loadBefore = loadAverage();
		List<Row> rows = new ArrayList<>();
		Path script = Files.createTempFile("half-denied", ".lua");
		Files.writeString(script, HALF_DENIED_SCRIPT);
		List<Contender> contenders;
		try (RedisServer redis = RedisServer.start(); RedisProbe probe = new RedisProbe(redis.uri())) {
			contenders = contenders(redis);
			for (int round = 1; round <= this.rounds; round++) {
				List<Contender> order = new ArrayList<>(contenders);
				Collections.rotate(order, -(round - 1) * 3); // a different contender after each, per round
				for (Contender contender : order) {
					rows.add(measure(wrk, script, probe, contender, round));
				}
			}
		}
		finally {
			Files.deleteIfExists(script);
		}
		return new Outcome(wrk, command, contenders, rows, loadBefore + " before, " + loadAverage() + " after",
				this.warmup);
	}

	private Row measure(WrkBinary wrk, Path script, RedisProbe probe, Contender contender, int round)
			throws IOException, InterruptedException {
		try (ServerProcess server = ServerProcess.start(contender.command(), "/bench")) {
			List<String> options = new ArrayList<>(List.of("-t" + this.threads, "-c" + this.connections));
			if (contender.halfDenied()) {
				options.addAll(List.of("-s", script.toString()));
			}
			int warmup = warmUp(wrk, options, server);
			RedisProbe.Snapshot before = probe.snapshot();
			Duration cpuBefore = server.cpu();
			String output = WrkBenchmark.run(wrk, options, server.endpoint(), this.seconds);
			Duration cpu = server.cpu().minus(cpuBefore);
			RedisProbe.Snapshot after = probe.snapshot();
			long commands = after.calls()
				.keySet()
				.stream()
				.filter((name) -> !name.equals("info"))
				.mapToLong((name) -> after.callsSince(before, name))
				.sum();
			Row row = new Row(contender.name(), round, WrkBenchmark.parse(contender.name(), round, output), commands,
					after.cpuMicrosSince(before), cpu.toNanos() / 1_000.0, warmup);
			System.out.printf(Locale.ROOT,
					"http-compare %-44s round %d %,9.0f req/s p50 %6.0f us p99 %6.0f us, app CPU %5.0f us/request"
							+ " (warm-up %d s)%n",
					contender.name(), round, row.wrk().requestsPerSecond(), row.wrk().p50(), row.wrk().p99(),
					row.perRequest(row.appCpuMicros()), warmup);
			return row;
		}
	}

	/**
	 * Loads a fresh JVM with wrk, not reported, until its JIT has settled: in steps, for at least the shortest
	 * warm-up, then until two consecutive steps' CPU per request (the whole process's: compilation included) are
	 * within 5% of each other ({@link #settled}), at most the longest warm-up. A fixed 5 s was too short: on 2 shared
	 * cores the Redis configuration still compiled for minutes, and its CPU per request fell fourfold between 5 s and
	 * 90 s of load.
	 * @return the seconds the warm-up lasted
	 */
	private int warmUp(WrkBinary wrk, List<String> options, ServerProcess server)
			throws IOException, InterruptedException {
		int elapsed = 0;
		double previous = Double.MAX_VALUE;
		while (elapsed < this.warmup.longest()) {
			Duration before = server.cpu();
			String output = WrkBenchmark.run(wrk, options, server.endpoint(), this.warmup.step());
			double perRequest = (double) server.cpu().minus(before).toNanos()
					/ Math.max(1, WrkBenchmark.parse("warm-up", 0, output).requests());
			elapsed += this.warmup.step();
			if (elapsed >= this.warmup.shortest() && settled(previous, perRequest)) {
				break;
			}
			previous = perRequest;
		}
		return elapsed;
	}

	/**
	 * {@return whether a warm-up step's CPU per request is within 5% of the step before} A step costlier than the one
	 * before by more (a collection, another process's burst on the shared cores) is noise, not a settled JIT.
	 * @param previous the step before's CPU per request, {@code Double.MAX_VALUE} for none
	 * @param current this step's
	 */
	static boolean settled(double previous, double current) {
		return previous != Double.MAX_VALUE && Math.abs(current - previous) <= 0.05 * previous;
	}

	/** Ours (this build, an earlier one if given) and the bucket4j starter's application if it was built. */
	private static List<Contender> contenders(RedisServer redis) {
		Path jar = Path.of(System.getProperty("bench.compare.jar", System.getProperty("java.class.path")));
		if (!jar.toString().endsWith(".jar") || !Files.isRegularFile(jar)) {
			throw new IllegalStateException("Run the section from benchmarks.jar, or name it with -Dbench.compare.jar");
		}
		String[] off = HttpBenchmark.configurations(redis).get("limiter off");
		String[] local = HttpBenchmark.configurations(redis).get("local backend");
		String[] onRedis = HttpBenchmark.configurations(redis).get("Redis backend");
		String[] denied = { "--ratelimit.policies.closed.algorithm=gcra", "--ratelimit.policies.closed.limit=1",
				"--ratelimit.policies.closed.window=1h", "--ratelimit.policies.closed.key=ip",
				"--ratelimit.filter.rules[1].paths=/bench/denied", "--ratelimit.filter.rules[1].policies=closed" };
		String reactive = "--spring.main.web-application-type=reactive";
		List<Contender> contenders = new ArrayList<>();
		String servletOff = "ours servlet, limiter off";
		contenders.add(ours(servletOff, servletOff, false, jar, off));
		contenders.add(ours("ours servlet, local backend", servletOff, false, jar, local));
		contenders.add(ours("ours servlet, Redis", servletOff, false, jar, onRedis));
		contenders.add(ours("ours servlet, Redis, half denied", servletOff, true, jar, concat(onRedis, denied)));
		String reactiveOff = "ours WebFlux, limiter off";
		contenders.add(ours(reactiveOff, reactiveOff, false, jar, concat(off, reactive)));
		contenders.add(ours("ours WebFlux, local backend", reactiveOff, false, jar, concat(local, reactive)));
		contenders.add(ours("ours WebFlux, Redis", reactiveOff, false, jar, concat(onRedis, reactive)));
		String baseline = System.getProperty("bench.compare.baseline");
		if (baseline != null) {
			Path before = Path.of(baseline);
			String label = System.getProperty("bench.compare.baseline.label", "before");
			contenders.add(ours("ours servlet, local backend (" + label + ")", servletOff, false, before, local));
			contenders.add(ours("ours servlet, Redis (" + label + ")", servletOff, false, before, onRedis));
		}
		Path bucket4j = Path
			.of(System.getProperty("bench.compare.bucket4j", "benchmarks/bucket4j-app/target/bucket4j-app.jar"));
		if (Files.isRegularFile(bucket4j)) {
			String b4j = "bucket4j starter 0.12.10 WebFlux (Boot 3.5.7)";
			String b4jOff = b4j + ", limiter off";
			contenders.add(bucket4j(b4jOff, b4jOff, false, bucket4j, redis, false));
			contenders.add(bucket4j(b4j + ", Redis", b4jOff, false, bucket4j, redis, true));
			contenders.add(bucket4j(b4j + ", Redis, half denied", b4jOff, true, bucket4j, redis, true));
		}
		else {
			System.out.println("http-compare: no " + bucket4j + " (benchmarks/run builds it): the bucket4j starter skipped");
		}
		return contenders;
	}

	private static Contender ours(String name, String off, boolean halfDenied, Path jar, String[] args) {
		List<String> command = ServerProcess.launcher(jar, MAIN);
		command.addAll(Arrays.asList(args));
		return new Contender(name, off, halfDenied, command);
	}

	/**
	 * The starter's WebFlux filter on Lettuce (its Lettuce backend serves no servlet filter): the same limits, the client
	 * address as key (its SpEL).
	 */
	private static Contender bucket4j(String name, String off, boolean halfDenied, Path jar, RedisServer redis,
			boolean enabled) {
		List<String> command = ServerProcess.jar(jar);
		command.addAll(List.of("--bench.redis.host=" + redis.host(), "--bench.redis.port=" + redis.port(),
				"--bucket4j.enabled=" + enabled, "--bucket4j.cache-to-use=redis-lettuce"));
		String[][] filters = { { "/bench", "1000000000", "minutes" }, { "/bench/denied", "1", "hours" } };
		for (int i = 0; i < filters.length; i++) {
			String at = "--bucket4j.filters[" + i + "].";
			command.addAll(List.of(at + "cache-name=buckets", at + "url=" + filters[i][0], at + "filter-method=webflux",
					at + "rate-limits[0].cache-key=getRemoteAddress().getAddress().getHostAddress()",
					at + "rate-limits[0].bandwidths[0].capacity=" + filters[i][1],
					at + "rate-limits[0].bandwidths[0].time=1", at + "rate-limits[0].bandwidths[0].unit=" + filters[i][2]));
		}
		return new Contender(name, off, halfDenied, command);
	}

	private static String[] concat(String[] a, String... b) {
		String[] all = Arrays.copyOf(a, a.length + b.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

	private static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).split(" ");
			return fields[0] + " / " + fields[1] + " / " + fields[2];
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		if (outcome.rows().isEmpty()) {
			return out.append("Skipped: wrk is not available here (").append(outcome.wrk().version()).append(").\n")
				.toString();
		}
		out.append(String.format(Locale.ROOT,
				"`%s` (%s), `%s` per run: %d connections on loopback, each sending its next request when the previous"
						+ " answer arrives; wrk, the application and `redis-server` share the machine's %d cores. Every"
						+ " run on a freshly started JVM (%s), after a warm-up with wrk (not reported) of at least %d s,"
						+ " then until the application's CPU per request of two consecutive %d s steps was within 5%% of"
						+ " each other (at most %d s: every run's warm-up below). Machine load average (1 / 5 / 15 min): %s."
						+ " App CPU per request: the application process's CPU time (its JIT and GC included) over wrk's"
						+ " requests, which other work on the machine changes less than requests per second. Redis"
						+ " commands and CPU per request from `INFO commandstats` and `INFO cpu` over wrk's requests."
						+ " \"vs off\": requests per second relative to the same application with the limiter off,"
						+ " measured in the same run.%n%n",
				outcome.wrk().version(), outcome.wrk().origin(), outcome.command(), Integer.getInteger(
						"bench.wrk.connections", HttpBenchmark.CONNECTIONS),
				Runtime.getRuntime().availableProcessors(), ServerProcess.HEAP, outcome.warmup().shortest(),
				outcome.warmup().step(), outcome.warmup().longest(), outcome.load()));
		Markdown means = new Markdown("configuration", "requests/s", "vs off", "p50 µs", "p90 µs", "p99 µs",
				"non-2xx share", "socket errors per run", "app CPU µs per request", "Redis commands per request",
				"Redis CPU µs per request");
		for (Contender contender : outcome.contenders()) {
			double[] m = mean(outcome.rows(), contender.name());
			double[] off = mean(outcome.rows(), contender.off());
			means.row(contender.name(), m[0], String.format(Locale.ROOT, "%.0f%%", 100 * m[0] / off[0]), m[1], m[2],
					m[3], String.format(Locale.ROOT, "%.0f%%", 100 * m[4]), m[7], m[8], m[5], m[6]);
		}
		out.append("Means of the rounds:\n\n").append(means).append("\nEvery run:\n\n");
		Markdown runs = new Markdown("configuration", "round", "warm-up s", "requests/s", "p50 µs", "p99 µs",
				"non-2xx answers", "socket errors", "app CPU µs per request", "Redis commands per request");
		for (Row row : outcome.rows()) {
			runs.row(row.contender(), row.round(), row.warmupSeconds(), row.wrk().requestsPerSecond(), row.wrk().p50(),
					row.wrk().p99(), row.wrk().non2xx(), row.wrk().socketErrors(), row.perRequest(row.appCpuMicros()),
					row.perRequest(row.redisCommands()));
		}
		return out.append(runs).toString();
	}

	/** Records each contender's throughput relative to its limiter-off twin, for the document's prose. */
	static void figures(Outcome outcome, Figures figures) {
		for (Contender contender : outcome.contenders()) {
			double[] m = mean(outcome.rows(), contender.name());
			double[] off = mean(outcome.rows(), contender.off());
			String at = "http.compare." + Figures.part(contender.name()) + ".";
			figures.put(at + "vs-off", m[0] / off[0]).put(at + "rps", m[0]).put(at + "p50", m[1])
				.put(at + "app-cpu", m[8]);
		}
	}

	/**
	 * Requests/s, p50, p90, p99, non-2xx share, Redis commands and CPU µs per request, socket errors, the
	 * application's CPU µs per request, averaged over the rounds.
	 */
	private static double[] mean(List<Row> rows, String name) {
		List<ToDoubleFunction<Row>> fields = List.of((row) -> row.wrk().requestsPerSecond(), (row) -> row.wrk().p50(),
				(row) -> row.wrk().p90(), (row) -> row.wrk().p99(), (row) -> row.perRequest(row.wrk().non2xx()),
				(row) -> row.perRequest(row.redisCommands()), (row) -> row.perRequest(row.redisCpuMicros()),
				(row) -> row.wrk().socketErrors(), (row) -> row.perRequest(row.appCpuMicros()));
		return WrkBenchmark.means(rows, (row) -> row.contender().equals(name), fields);
	}

}
