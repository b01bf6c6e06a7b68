package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.testkit.RedisBinary;
import io.github.ratelimit.testkit.RedisServer;

/**
 * Runs the benchmarks and writes their tables and chart under an output directory.
 * <p>
 * {@code java -jar benchmarks/target/benchmarks.jar [all|report|engine|script|functions|memory|accuracy|http|http-wrk|http-compare|lease|profile|failure|zset|harness|hot|top|cluster]... [--quick] [--out DIR]}
 * <p>
 * Every section's file starts with the {@code redis-server} version it ran on. {@code benchmarks/run} runs this on the
 * distribution's Redis 7 when it can be had (the test kit's embedded Redis 6.2 otherwise).
 */
public final class BenchmarkMain {

	/** The order sections run in: the one that kills and freezes its own server last. */
	private static final List<String> ORDER = List.of("engine", "script", "functions", "memory", "accuracy", "http",
			"http-wrk", "http-compare", "lease", "profile", "zset", "harness", "hot", "top", "cluster", "failure");

	private BenchmarkMain() {
	}

	public static void main(String[] args) throws Exception {
		System.setProperty("java.awt.headless", "true");
		Set<String> sections = new java.util.LinkedHashSet<>();
		Path out = Path.of("benchmarks", "results");
		boolean quick = false;
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--quick" -> quick = true;
				case "--out" -> out = Path.of(args[++i]);
				default -> sections.add(args[i]);
			}
		}
		if (sections.equals(Set.of("report"))) {
			// RESULTS.md again from the stored tables and figures, nothing run (after an edit of the template)
			Path document = ResultsDocument.write(out, Figures.load(out));
			System.out.println((document != null) ? "wrote " + document : "no template next to " + out);
			return;
		}
		boolean all = sections.isEmpty() || sections.contains("all");
		if (all) {
			sections = Set.copyOf(ORDER);
		}
		if (!ORDER.containsAll(sections)) {
			throw new IllegalArgumentException("Unknown sections " + sections + "; known: " + ORDER);
		}
		if (!RedisBinary.get().version().isAtLeast(7, 0)) {
			System.err.println("Running on redis-server " + RedisBinary.get().version()
					+ ", not Redis 7: benchmarks/run fetches the distribution's Redis 7 where it can");
		}
		Files.createDirectories(out);
		Instant started = Instant.now();
		Figures figures = Figures.load(out);
		for (String section : sections) {
			// http.md holds both HTTP sections: each keeps its own figures
			figures.clear(switch (section) {
				case "http" -> "http.java";
				case "http-wrk" -> "http.wrk";
				case "http-compare" -> "http.compare";
				default -> section;
			});
			figures.clear("run." + section);
			figures.put("run." + section + ".date", started.toString().replaceAll("\\.\\d+Z$", "Z"))
				.put("run." + section + ".redis", RedisBinary.get().version().toString())
				.put("run." + section + ".quick", Boolean.toString(quick));
		}
		try (RedisServer redis = RedisServer.start()) {
			if (all) {
				// the environment of a whole run; a single section's run leaves it to the run it describes
				write(out.resolve("environment.md"), environment());
			}
			else {
				System.out.print(environment());
			}
			Run run = new Run(redis, out, figures, quick, sections.size() == 1);
			for (String section : ORDER) {
				if (sections.contains(section)) {
					run.section(section);
				}
			}
		}
		figures.save();
		Path document = ResultsDocument.write(out, figures);
		System.out.printf("done in %s, results in %s%s%n", Duration.between(started, Instant.now()), out,
				(document != null) ? ", " + document : "");
		System.exit(0);
	}

	/** One run's Redis, output and figures, and the sections it can run. */
	private record Run(RedisServer redis, Path out, Figures figures, boolean quick, boolean alone) {

		Duration warmup() {
			return Duration.ofSeconds(this.quick ? 1 : 2);
		}

		Duration measure() {
			return Duration.ofSeconds(this.quick ? 2 : 5);
		}

		void section(String section) throws Exception {
			switch (section) {
				case "engine" -> engine();
				case "script" -> {
					List<ScriptCostBenchmark.Row> rows = new ScriptCostBenchmark().run(this.redis);
					write(this.out.resolve("script.md"), ScriptCostBenchmark.report(rows));
					ScriptCostBenchmark.figures(rows, this.figures);
				}
				case "functions" -> functions();
				case "memory" -> {
					List<MemoryBenchmark.Row> rows = new MemoryBenchmark().run(this.redis);
					write(this.out.resolve("memory.md"), MemoryBenchmark.report(rows));
					MemoryBenchmark.figures(rows, this.figures);
				}
				case "accuracy" -> write(this.out.resolve("accuracy.md"),
						AccuracyBenchmark.report(new AccuracyBenchmark().run(this.redis)));
				case "http" -> {
					List<HttpBenchmark.Row> rows = new HttpBenchmark(warmup(), measure()).run(this.redis);
					write(this.out.resolve("http.md"), HttpBenchmark.report(rows));
					HttpBenchmark.figures(rows, this.figures);
				}
				case "http-wrk" -> httpWrk();
				case "http-compare" -> {
					HttpCompareBenchmark.Outcome outcome = new HttpCompareBenchmark(this.quick).run();
					write(this.out.resolve(HttpCompareBenchmark.FILE), HttpCompareBenchmark.report(outcome));
					HttpCompareBenchmark.figures(outcome, this.figures);
				}
				case "lease" -> {
					LeaseBenchmark.Outcome outcome = new LeaseBenchmark(this.quick).run();
					write(this.out.resolve("lease.md"), LeaseBenchmark.report(outcome));
					LeaseBenchmark.figures(outcome, this.figures);
				}
				case "profile" -> write(this.out.resolve("profile.md"), ProfileBenchmark
					.report(new ProfileBenchmark(warmup(), measure(), this.out).run(this.redis)));
				case "zset" -> write(this.out.resolve("zset.md"),
						ZsetCostBenchmark.report(new ZsetCostBenchmark().run(this.redis)));
				case "harness" -> {
					IndependentHarness.Outcome outcome = new IndependentHarness(this.quick).run(this.redis);
					write(this.out.resolve("harness.md"), IndependentHarness.report(outcome));
					IndependentHarness.figures(outcome, this.figures);
				}
				case "hot" -> {
					HotIdentityBenchmark.Outcome outcome = new HotIdentityBenchmark(this.quick).run(this.redis);
					write(this.out.resolve("hot.md"), HotIdentityBenchmark.report(outcome));
					HotIdentityBenchmark.figures(outcome, this.figures);
				}
				case "top" -> {
					TopDenialsBenchmark.Outcome outcome = new TopDenialsBenchmark(this.quick).run(this.redis);
					write(this.out.resolve("top.md"), TopDenialsBenchmark.report(outcome));
					TopDenialsBenchmark.figures(outcome, this.figures);
				}
				case "cluster" -> {
					// on a three-master Cluster of its own
					ClusterSizingBenchmark.Outcome outcome = new ClusterSizingBenchmark(this.quick).run();
					write(this.out.resolve("cluster.md"), ClusterSizingBenchmark.report(outcome));
					ClusterSizingBenchmark.figures(outcome, this.figures);
				}
				// on a redis-server of its own: it kills and freezes it
				case "failure" -> write(this.out.resolve("failure.md"),
						FailureReport.report(new FailureBenchmark(this.alone).run()));
				default -> throw new IllegalStateException("No section " + section);
			}
		}

		/** The judged contenders in rounds (3, one with --quick), ratios the medians of the rounds' ratios. */
		private void engine() throws Exception {
			EngineBenchmark.Outcome outcome = new EngineBenchmark(this.quick).run(this.redis);
			write(this.out.resolve("engine.md"), EngineBenchmark.report(outcome));
			EngineBenchmark.figures(outcome, this.figures);
			List<EngineBenchmark.Measurements> allowed = outcome.scenarios().get(Scenario.ALLOWED);
			if (allowed != null && System.getProperty("bench.algorithms") == null) {
				chart(this.out.resolve("throughput.png"), allowed);
			}
		}

		private void functions() throws IOException {
			if (!RedisBinary.get().version().isAtLeast(7, 0)) {
				write(this.out.resolve("functions.md"), "Skipped: Redis functions need Redis 7 or later.\n");
				return;
			}
			List<FunctionsBenchmark.Row> rows = new FunctionsBenchmark().run(this.redis);
			write(this.out.resolve("functions.md"), FunctionsBenchmark.report(rows));
			FunctionsBenchmark.figures(rows, this.figures);
		}

		/** After the Java driver's part of http.md, which it keeps. */
		private void httpWrk() throws Exception {
			Path http = this.out.resolve("http.md");
			WrkBenchmark.Outcome outcome = new WrkBenchmark(warmup(), this.quick).run();
			write(http, WrkBenchmark.merge(Files.exists(http) ? Files.readString(http) : "",
					WrkBenchmark.report(outcome)));
			WrkBenchmark.figures(outcome, this.figures);
		}

	}

	/** The bar chart of section 1, all allowed: the medians of the rounds. */
	private static void chart(Path file, List<EngineBenchmark.Measurements> results) throws IOException {
		List<String> series = List.of(EngineBenchmark.RAW, "ours token-bucket", "ours gcra", EngineBenchmark.BUCKET4J);
		List<String> groups = new ArrayList<>();
		double[][] values = new double[EngineBenchmark.MODES.size()][series.size()];
		for (int m = 0; m < EngineBenchmark.MODES.size(); m++) {
			String mode = EngineBenchmark.MODES.get(m).name();
			groups.add(mode);
			for (int s = 0; s < series.size(); s++) {
				values[m][s] = EngineBenchmark.find(results, series.get(s), mode).opsPerSecond();
			}
		}
		BarChart.write(file, "Decisions per second, one redis-server, 2 cores (all allowed)", groups, series, values,
				"ops/s");
	}

	/** The machine, the JVM and the redis-server, as a markdown table. */
	static String environment() {
		Runtime runtime = Runtime.getRuntime();
		return "| what | value |\n|---|---|\n" + "| date | " + Instant.now() + " |\n" + "| cores | "
				+ runtime.availableProcessors() + " |\n" + "| JVM | " + System.getProperty("java.vm.name") + " "
				+ System.getProperty("java.version") + " |\n" + "| JVM arguments | "
				+ String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()) + " |\n"
				+ "| redis-server | " + RedisBinary.get().version() + " (" + RedisBinary.get().origin() + ") |\n"
				+ "| OS | " + System.getProperty("os.name") + " " + System.getProperty("os.arch") + " |\n";
	}

	private static void write(Path file, String content) throws IOException {
		String written = file.getFileName().toString().equals("environment.md") ? content
				: "Ran on redis-server " + RedisBinary.get().version() + " (" + RedisBinary.get().origin() + ").\n\n"
						+ content;
		Files.writeString(file, written);
		System.out.println("wrote " + file);
	}

}
