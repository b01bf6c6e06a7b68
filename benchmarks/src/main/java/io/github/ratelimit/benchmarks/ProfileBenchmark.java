package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import one.profiler.AsyncProfiler;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 8 ({@code profile}): where the client's CPU per decision goes on the engine's Redis path. The token bucket
 * through this engine and the raw Lettuce {@code EVALSHA} ceiling of section 1, blocking with 32 threads and
 * non-blocking with 256 calls in flight, all decisions allowed, each run under async-profiler (CPU samples of the
 * whole process, 1 ms interval) after a warm-up that is not profiled (at least three times the engine section's, on
 * until the JIT compiler is quiet, at most 30 s). Writes one flame graph per run (async-profiler's
 * HTML) and its collapsed stacks, and reports the samples by group ({@link StackProfile}) turned into microseconds of
 * client CPU per decision, with the frames that take the most. When async-profiler cannot run here (its native
 * library is for Linux and macOS only) the section says why and skips.
 */
final class ProfileBenchmark {

	private final Duration warmup;

	private final Duration measure;

	private final Path out;

	/**
	 * A profile of each run.
	 * @param warmup the engine section's warm-up (this section warms up at least three times as long)
	 * @param measure the engine section's measurement: each run is profiled for twice as long, unless
	 * {@code -Dbench.profile.seconds} says
	 * @param out where the flame graphs go
	 */
	ProfileBenchmark(Duration warmup, Duration measure, Path out) {
		this.warmup = warmup;
		this.measure = Duration.ofSeconds(Long.getLong("bench.profile.seconds", 2 * measure.toSeconds()));
		this.out = out;
	}

	/**
	 * One profiled run.
	 * @param result what the load driver measured while the profiler ran
	 * @param profile the CPU samples
	 * @param flameGraph the flame graph's file name, beside the report
	 * @param warmup how long the unprofiled warm-up before it took
	 */
	record Run(LoadDriver.Result result, StackProfile profile, String flameGraph, Duration warmup) {

		/** Client CPU per decision in µs that a number of samples stands for. */
		double micros(long samples) {
			return this.result.clientCpuMicros() * samples / Math.max(1, this.profile.samples());
		}

		double percent(long samples) {
			return 100.0 * samples / Math.max(1, this.profile.samples());
		}

	}

	/**
	 * What the section measured, or why it skipped.
	 * @param profiler the profiler and how it sampled, or why it could not run
	 * @param runs the profiled runs, none when skipped
	 */
	record Outcome(String profiler, List<Run> runs) {
	}

	Outcome run(RedisServer redis) throws InterruptedException, IOException {
		AsyncProfiler profiler;
		try {
			profiler = AsyncProfiler.getInstance();
		}
		catch (RuntimeException | LinkageError ex) {
			String reason = "async-profiler cannot run here: " + ex;
			System.out.println("profile: skipped, " + reason);
			return new Outcome(reason, List.of());
		}
		String event = System.getProperty("bench.profile.event", "cpu");
		String description = "async-profiler " + profiler.getVersion() + ", event `" + event + "`, interval 1 ms, "
				+ this.measure.toSeconds() + " s per run";
		List<Run> runs = new ArrayList<>();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			redis.flushAll();
			Map<String, Supplier<Contender>> contenders = new java.util.LinkedHashMap<>();
			contenders.put("token-bucket", () -> new EngineContender("ours token-bucket",
					new RedisRateLimitBackend(factory), Algorithm.TOKEN_BUCKET, Scenario.ALLOWED));
			contenders.put("raw", () -> new RawEvalShaContender(redis.uri(), Scenario.ALLOWED));
			for (EngineBenchmark.Mode mode : List.of(EngineBenchmark.MODES.get(1), EngineBenchmark.MODES.get(3))) {
				for (Map.Entry<String, Supplier<Contender>> entry : contenders.entrySet()) {
					try (Contender contender = entry.getValue().get()) {
						String file = "profile-" + entry.getKey() + "-" + mode.name().replace(' ', '-') + ".html";
						Run run = profile(profiler, event, contender, mode, probe, file);
						runs.add(run);
						System.out.printf(Locale.ROOT, "profile %-22s %-18s %,10.0f ops/s %6.1f us client CPU/op %,d samples%n",
								contender.name(), mode.name(), run.result().opsPerSecond(),
								run.result().clientCpuMicros(), run.profile().samples());
					}
				}
			}
		}
		finally {
			factory.destroy();
		}
		return new Outcome(description, runs);
	}

	private Run profile(AsyncProfiler profiler, String event, Contender contender, EngineBenchmark.Mode mode,
			RedisProbe probe, String file) throws InterruptedException, IOException {
		Duration warmedUp = warmUp(contender, mode, probe);
		System.out.printf(Locale.ROOT, "profile %-22s %-18s warmed up for %d s%n", contender.name(), mode.name(),
				warmedUp.toSeconds());
		profiler.execute("start,event=" + event + ",interval=1ms");
		LoadDriver.Result result;
		try {
			// no warm-up of its own: the profile covers the measured load from its first call
			result = drive(new LoadDriver(Duration.ZERO, this.measure), contender, mode, probe);
		}
		finally {
			profiler.execute("stop");
		}
		String collapsed = profiler.execute("collapsed");
		Path collapsedFile = this.out.resolve(file.replace(".html", ".collapsed"));
		Files.writeString(collapsedFile, collapsed);
		profiler.execute("flamegraph,title=" + contender.name() + " " + mode.name() + ",file="
				+ this.out.resolve(file).toAbsolutePath());
		return new Run(result, StackProfile.parse(collapsed), file, warmedUp);
	}

	/**
	 * Drives the contender, not profiled, for three times the engine section's warm-up, then on until the JIT
	 * compiler is quiet (less than 20 ms of compilation in each of two seconds of load in a row) or for at most 30 s
	 * in all: on a busy
	 * machine a fixed warm-up leaves the compiler's work in the profile. What the compiler still does is reported
	 * apart.
	 * @return how long the warm-up took
	 */
	private Duration warmUp(Contender contender, EngineBenchmark.Mode mode, RedisProbe probe)
			throws InterruptedException {
		long start = System.nanoTime();
		drive(new LoadDriver(this.warmup.multipliedBy(3), Duration.ofMillis(1)), contender, mode, probe);
		CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
		LoadDriver second = new LoadDriver(Duration.ofSeconds(1), Duration.ofMillis(1));
		int quiet = 0;
		while (quiet < 2 && compiler != null && compiler.isCompilationTimeMonitoringSupported()
				&& System.nanoTime() - start < Duration.ofSeconds(30).toNanos()) {
			long compiled = compiler.getTotalCompilationTime();
			drive(second, contender, mode, probe);
			quiet = (compiler.getTotalCompilationTime() - compiled < 20) ? quiet + 1 : 0;
		}
		return Duration.ofNanos(System.nanoTime() - start);
	}

	private static LoadDriver.Result drive(LoadDriver driver, Contender contender, EngineBenchmark.Mode mode,
			RedisProbe probe) throws InterruptedException {
		return mode.blocking() ? driver.blocking(contender, mode.concurrency(), probe)
				: driver.nonBlocking(contender, mode.concurrency(), probe);
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		if (outcome.runs().isEmpty()) {
			return out.append("Skipped: ").append(outcome.profiler()).append('\n').toString();
		}
		out.append("Profiler: ").append(outcome.profiler()).append(", the whole client process (load threads,")
			.append(" Lettuce's event loop, the JIT compiler and the garbage collector included; `redis-server` is")
			.append(" another process). Client CPU per decision from the JVM's process CPU time over the profiled")
			.append(" run; a group's µs per decision is its share of the samples times that.\n\n");
		Markdown runs = new Markdown("contender", "mode", "warm-up s", "ops/s", "client CPU µs/op", "Redis CPU µs/op",
				"samples", "flame graph");
		for (Run run : outcome.runs()) {
			runs.row(run.result().contender(), run.result().mode(), run.warmup().toSeconds(), run.result().opsPerSecond(),
					run.result().clientCpuMicros(), run.result().redisCpuMicros(), run.profile().samples(),
					"`" + run.flameGraph() + "`");
		}
		out.append(runs);
		out.append("\nClient CPU per decision by layer, µs (each sample charged to its nearest caller that is a library")
			.append(" or our code, so the JDK, native and kernel work a layer causes is the layer's; ")
			.append("what is left is the JDK's own threads and the JVM's):\n\n");
		// one column per run, and after each pair of runs of one mode (ours, then raw) their difference
		List<String> header = new ArrayList<>(List.of("layer"));
		for (int i = 0; i < outcome.runs().size(); i++) {
			header.add(shortName(outcome.runs().get(i)));
			if (pairEnds(outcome.runs(), i)) {
				header.add("ours − raw, " + outcome.runs().get(i).result().mode());
			}
		}
		Markdown layers = new Markdown(header.toArray(String[]::new));
		List<Map<String, Long>> byLayer = outcome.runs().stream().map((run) -> run.profile().byLayer()).toList();
		List<String> rows = new ArrayList<>();
		for (String group : StackProfile.GROUPS) {
			if (byLayer.stream().anyMatch((counts) -> counts.get(group) > 0)) {
				rows.add(group);
			}
		}
		rows.add("**all**");
		rows.add("**all but the JIT compiler**");
		for (String name : rows) {
			List<Object> row = new ArrayList<>(List.of(name));
			double previous = 0;
			for (int i = 0; i < outcome.runs().size(); i++) {
				Run run = outcome.runs().get(i);
				Map<String, Long> counts = byLayer.get(i);
				double micros = switch (name) {
					case "**all**" -> run.result().clientCpuMicros();
					case "**all but the JIT compiler**" -> run.micros(run.profile().samples() - counts.get(StackProfile.JIT));
					default -> run.micros(counts.get(name));
				};
				row.add(micros);
				if (pairEnds(outcome.runs(), i)) {
					row.add(previous - micros);
				}
				previous = micros;
			}
			layers.row(row.toArray());
		}
		out.append(layers);
		for (Run run : outcome.runs()) {
			out.append("\n##### ").append(shortName(run)).append("\n\n");
			Markdown groups = new Markdown("group", "self %", "self µs/op", "total %", "by layer %", "by layer µs/op");
			Map<String, Long> self = run.profile().self();
			Map<String, Long> inclusive = run.profile().total();
			Map<String, Long> layer = run.profile().byLayer();
			for (String group : StackProfile.GROUPS) {
				if (inclusive.get(group) > 0) {
					groups.row(group, run.percent(self.get(group)), run.micros(self.get(group)),
							run.percent(inclusive.get(group)), run.percent(layer.get(group)),
							run.micros(layer.get(group)));
				}
			}
			out.append(groups);
			if (run.result().contender().startsWith("ours")) {
				Set<String> jvmThreads = Set.of(StackProfile.JIT, StackProfile.GC, StackProfile.JVM_THREADS);
				out.append("\nTop frames by self time (on the Java threads: the JIT compiler's and the garbage collector's")
					.append(" threads left out):\n\n")
					.append(frames(run, run.profile().top(15, true, (frame) -> !jvmThreads.contains(frame.group()))));
				Set<String> ours = Set.of(StackProfile.SPRING_DATA_REDIS, StackProfile.SPRING, StackProfile.ENGINE);
				out.append("\nOur engine's and Spring's frames by self time:\n\n")
					.append(frames(run, run.profile().top(12, true, (frame) -> ours.contains(frame.group()))));
				out.append("\nOur engine's and Spring's frames by total time (the frame and what it calls; on the")
					.append(" non-blocking path the next call is made from the answer's callback, so the outer frames")
					.append(" also hold the next decision):\n\n")
					.append(frames(run, run.profile().top(12, false, (frame) -> ours.contains(frame.group()))));
			}
		}
		return out.toString();
	}

	private static Markdown frames(Run run, List<StackProfile.Frame> frames) {
		Markdown table = new Markdown("frame", "group", "self %", "self µs/op", "total %", "total µs/op");
		for (StackProfile.Frame frame : frames) {
			table.row("`" + frame.name() + "`", frame.group(), run.percent(frame.self()), run.micros(frame.self()),
					run.percent(frame.total()), run.micros(frame.total()));
		}
		return table;
	}

	/** Whether run {@code i} is a raw run right after an engine run of the same mode. */
	private static boolean pairEnds(List<Run> runs, int i) {
		return i > 0 && !runs.get(i).result().contender().startsWith("ours")
				&& runs.get(i - 1).result().contender().startsWith("ours")
				&& runs.get(i - 1).result().mode().equals(runs.get(i).result().mode());
	}

	private static String shortName(Run run) {
		return (run.result().contender().startsWith("ours") ? "ours" : "raw") + " " + run.result().mode();
	}

}
