package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoublePredicate;

/**
 * The targets table of {@code RESULTS.md}: each target of issue #9, what the latest runs measured (from
 * {@link Figures}) and whether that meets it. A target a run did not measure says so; the reasons for a miss are the
 * ones the measurements showed when this was written, and are printed only while the target is missed.
 */
final class Targets {

	private static final List<String> MODES = EngineBenchmark.MODES.stream()
		.map((mode) -> Figures.part(mode.name()))
		.toList();

	private static final List<String> SCENARIOS = List.of("allowed", "half-denied");

	private static final List<String> HOT_ALGORITHMS = List.of("token-bucket", "gcra", "fixed-window",
			"sliding-window-log", "sliding-window-counter");

	/**
	 * What the misses of section 1 came from when this was written: the same build measured four times in a row on
	 * this machine moved by more than the targets' margins.
	 */
	private static final String NOISE = "On this shared two-core machine one contender's throughput in one mode moves"
			+ " by up to 20% from one measurement to the next (the raw ceiling alone measured 84,000 to 116,000"
			+ " decisions per second in four runs of one build), more than the margin of a ratio near 100%: the"
			+ " engine section therefore runs the judged contenders in rounds, in an order rotated per round, and"
			+ " judges the median of the rounds' ratios (section 1 shows each round's). With one thread or 32 in"
			+ " flight, batches are small, so ours and the raw call do nearly the same work and either can come"
			+ " out ahead.";

	/**
	 * Why "top on" can read below 95% of "off" without costing that much: one round pairs two measurements seconds
	 * apart, and a round's ratio of one contender to another moves by more than 5 points on this machine.
	 */
	private static final String TOP_NOISE = "Recording a denial costs about 0.4 µs at worst (section 12, a new identity"
			+ " evicting another; the half-denied load's 5,000 refused identities over 64 counters evict on nearly"
			+ " every denial), against tens of µs per decision; a median under 95% with rounds on both sides of 100%"
			+ " (the \"per round\" column) is the machine's noise, one under 95% in every round a cost to look into.";

	private final Figures figures;

	private final Markdown table = new Markdown("target", "measured", "met?");

	/** The targets missed, by the reason they were missed. */
	private final java.util.Map<String, List<String>> misses = new java.util.LinkedHashMap<>();

	private Targets(Figures figures) {
		this.figures = figures;
	}

	static String table(Figures figures) {
		Targets targets = new Targets(figures);
		targets.build();
		StringBuilder out = new StringBuilder(targets.table.toString());
		if (!targets.misses.isEmpty()) {
			out.append("\nWhy the targets not met are not met:\n\n");
			targets.misses.forEach((why, missed) -> out.append("- ").append(String.join("; ", missed)).append(": ")
				.append(why).append('\n'));
		}
		return out.toString();
	}

	private void build() {
		for (String algorithm : List.of("token-bucket", "gcra")) {
			engine(algorithm + " >= 90% of the raw `EVALSHA` ceiling in every mode, all allowed and half denied"
					+ " (section 1)", algorithm + ".ceiling", (r) -> r >= 0.90, Figures::percent, NOISE);
			engine(algorithm + " ahead of bucket4j 8.19 (Lettuce) in every mode (section 1)", algorithm + ".bucket4j",
					(r) -> r > 1.0, Figures::times, NOISE);
		}
		engine("top limited identities on within noise of off: ours token bucket (batched) recording every decision"
				+ " into the top denials >= 95% of the same without, median of the rounds' ratios, in every mode, all"
				+ " allowed (nothing recorded) and half denied (every denial recorded) (section 1)",
				"token-bucket-top.off", (r) -> r >= 0.95, Figures::percent, TOP_NOISE);
		harness();
		script();
		hot();
		http();
		batching();
		memory();
		functions();
		cluster();
	}

	private void engine(String target, String figure, DoublePredicate met, java.util.function.DoubleFunction<String> format,
			String why) {
		List<String> measured = new ArrayList<>();
		int misses = 0;
		int missing = 0;
		for (String scenario : SCENARIOS) {
			List<String> values = new ArrayList<>();
			for (String mode : MODES) {
				double value = this.figures.number("engine." + scenario + "." + mode + "." + figure);
				if (Double.isNaN(value)) {
					missing++;
				}
				else if (!met.test(value)) {
					misses++;
				}
				values.add(Double.isNaN(value) || met.test(value) ? format.apply(value) : "**" + format.apply(value) + "**");
			}
			measured.add(String.join(", ", values) + " " + scenario.replace('-', ' '));
		}
		verdict(target, String.join("; ", measured) + " (" + String.join(", ", modeNames()) + ")", misses, missing, why);
	}

	private void harness() {
		List<String> measured = new ArrayList<>();
		int misses = 0;
		int missing = 0;
		for (String load : List.of("all-allowed", "half-denied")) {
			List<String> values = new ArrayList<>();
			for (String mode : MODES) {
				double raw = this.figures.number("harness." + load + "." + mode + ".raw");
				double peer = this.figures.number("harness." + load + "." + mode + ".bucket4j");
				if (Double.isNaN(raw) || Double.isNaN(peer)) {
					missing++;
				}
				else if (raw < 0.90 || peer <= 1.0) {
					misses++;
				}
				String value = Figures.percent(raw) + " / " + Figures.times(peer);
				values.add((raw < 0.90 || peer <= 1.0) ? "**" + value + "**" : value);
			}
			measured.add(load.replace('-', ' ') + ": " + String.join(", ", values));
		}
		verdict("independent harness (public API, token bucket 100 / 10 per s, 10,000 keys) >= 90% of a raw Lettuce"
				+ " `EVALSHA` and ahead of bucket4j in every mode, one run (section 8)",
				"of raw / of bucket4j, " + String.join(", ", modeNames()) + ": " + String.join("; ", measured), misses,
				missing,
				"With one blocking thread, a lone caller pays our per-call client work (the request id, the decision"
						+ " objects, the batcher's queue) with nothing to share it with, and the raw contender does none"
						+ " of it; a call's latency there is mostly thread wake-ups on two shared cores, and the rounds"
						+ " of one run spread by 20 points (see the \"per round\" column), so which load misses changes"
						+ " from run to run.");
	}

	private void script() {
		List<String> measured = new ArrayList<>();
		int misses = 0;
		int missing = 0;
		for (String algorithm : List.of("token-bucket", "gcra")) {
			double ratio = this.figures.number("script.ours-" + algorithm + ".raw");
			if (Double.isNaN(ratio)) {
				missing++;
			}
			else if (ratio > 1.05) {
				misses++;
			}
			measured.add(algorithm + " " + Figures.percent(ratio));
		}
		List<String> others = new ArrayList<>();
		for (String algorithm : List.of("sliding-window-log", "sliding-window-counter", "fixed-window", "concurrency")) {
			others.add(algorithm + " " + Figures.percent(this.figures.number("script.ours-" + algorithm + ".raw")));
		}
		verdict("Redis time per call <= 105% of the raw script's, token bucket and GCRA; every algorithm reported"
				+ " (section 1b)", String.join(", ", measured) + " (the others: " + String.join(", ", others) + ")",
				misses, missing,
				"Beyond the raw script, the token bucket and GCRA take the cost as an argument and return the"
						+ " server's time and four figures (the raw script returns two); the rows of section 1b show"
						+ " what each of those costs the raw script by itself, and how far one round spreads from the"
						+ " next on this machine.");
	}

	private void hot() {
		List<String> measured = new ArrayList<>();
		int misses = 0;
		int missing = 0;
		for (String algorithm : HOT_ALGORITHMS) {
			String at = "hot." + algorithm + ".";
			double denied = this.figures.number(at + "on.calls-per-denied");
			double admitted = this.figures.number(at + "on.calls-per-admitted");
			double same = this.figures.number(at + "replay.same-decisions");
			if (Double.isNaN(denied) || Double.isNaN(same)) {
				missing++;
				measured.add(algorithm + " n/a");
				continue;
			}
			boolean met = denied <= 0.05 && Math.abs(admitted - 1.0) < 0.005 && same == 1;
			if (!met) {
				misses++;
			}
			String value = algorithm + " " + String.format(Locale.ROOT, "%.3f", denied) + " per denied (replayed: "
					+ String.format(Locale.ROOT, "%.3f", this.figures.number(at + "replay.calls-per-denied")) + "), "
					+ String.format(Locale.ROOT, "%.2f", admitted) + " per admitted, "
					+ ((same == 1) ? "same decisions" : "decisions differ");
			measured.add(met ? value : "**" + value + "**");
		}
		verdict("hot identity at 10x its limit: <= 0.05 Redis calls per denied request, no extra call for an admitted"
				+ " one, the same decisions as without the denial cache (section 9)", String.join("; ", measured), misses,
				missing, "Paced on the real clock, the figure depends on latency as well as on the cache: a"
						+ " cached wait counts from when the call that taught it was sent, and requests sent while an"
						+ " admitting call is in flight still reach Redis; a loaded machine moves it (the replay at"
						+ " explicit times, which has no latency, is the exact check).");
	}

	private void http() {
		double p50 = this.figures.number("http.wrk.redis-backend.added-p50");
		double share = this.figures.number("http.wrk.redis-backend.vs-off");
		double javaP50 = this.figures.number("http.java.redis-backend.added-p50");
		double javaShare = this.figures.number("http.java.redis-backend.vs-off");
		String measured = "wrk: +" + millis(p50) + " p50, " + Figures.percent(share)
				+ " of the requests per second with the limiter off; our Java driver: +" + millis(javaP50) + ", "
				+ Figures.percent(javaShare);
		this.table.row("HTTP: the Redis backend's added p50 and throughput against the limiter off, with `wrk` beside"
				+ " the Java driver (section 4)", measured, Double.isNaN(p50) ? "**not measured**" : "reported");
	}

	private void batching() {
		String at = "engine.%s.non-blocking-x256.";
		List<String> measured = new ArrayList<>();
		int misses = 0;
		int missing = 0;
		for (String scenario : SCENARIOS) {
			double ratio = this.figures.number(String.format(at, scenario) + "token-bucket.ceiling");
			double p99 = this.figures.number(String.format(at, scenario) + "token-bucket.p99");
			double rawP99 = this.figures.number(String.format(at, scenario) + "raw.p99");
			if (Double.isNaN(ratio)) {
				missing++;
			}
			else if (ratio < 1.5 || p99 > rawP99) {
				misses++;
			}
			measured.add(scenario.replace('-', ' ') + " " + Figures.times(ratio) + ", p99 " + millis(p99)
					+ " against the ceiling's " + millis(rawP99));
		}
		verdict("stretch: natural batching at 1.5x the raw per-call ceiling at 256 in flight, p99 no worse"
				+ " (section 1)", String.join("; ", measured), misses, missing,
				"With every decision allowed, each decision's reply is the largest and the batches the most"
						+ " client work; the ratio has measured 1.35 to 1.98x across runs (1.5x and more when half"
						+ " are denied), and the p99 has stayed below the ceiling's.");
	}

	private void memory() {
		double log = this.figures.number("memory.sliding-window-log.per-entry");
		double concurrency = this.figures.number("memory.concurrency.per-entry");
		// 1,864 bytes per key of 50 entries with request ids as members, 104 of them the key's own: 35 per entry
		double before = 35;
		String measured = String.format(Locale.ROOT,
				"sliding window log %.1f, concurrency %.1f bytes per entry (%,.0f and %,.0f bytes per key of 50)", log,
				concurrency, this.figures.number("memory.sliding-window-log.per-key"),
				this.figures.number("memory.concurrency.per-key"));
		verdict("halve the sorted-set entries' memory: 35 bytes per entry before, beyond the key's own (section 2)",
				measured, (Math.max(log, concurrency) <= before / 2) ? 0 : 1, Double.isNaN(log) ? 1 : 0,
				"The member is still more than a small integer.");
	}

	private void functions() {
		double time = this.figures.number("functions.time-ratio");
		double rate = this.figures.number("functions.throughput-ratio");
		this.table.row("Redis Functions (`FCALL`) as an option if they measure better or remove the `NOSCRIPT` round"
				+ " trip after a failover (section 1c)",
				Double.isNaN(time) ? "n/a"
						: "FCALL's Redis time per call " + Figures.percent(time) + " of EVALSHA's, throughput "
								+ Figures.percent(rate) + "; after a replica's promotion no `NOSCRIPT` (tested)",
				Double.isNaN(time) ? "**not measured**"
						: "shipped as `ratelimit.redis.script-mode=functions`"
								+ ((time < 0.97 && rate > 1.03) ? ", measuring better" : ", for failover; default `evalsha`"));
	}

	private void cluster() {
		double perCore = this.figures.number("cluster.token-bucket.per-core");
		double masters = this.figures.number("cluster.token-bucket.masters");
		double utilisation = this.figures.number("cluster.utilisation");
		double ratio = this.figures.number("cluster.token-bucket.redis-cpu-micros")
				/ this.figures.number("cluster.per-call.token-bucket.redis-cpu-micros");
		this.table.row("Cluster sizing rule and masters for 500,000 decisions per second, batched: Redis CPU per"
				+ " token-bucket decision at most 40% of the per-call path's, 5 masters or fewer (section 10)",
				Double.isNaN(perCore) ? "n/a"
						: String.format(Locale.ROOT, "%,.0f token-bucket decisions per second per master core; %.0f"
								+ " masters at %.0f%% of a core each; Redis CPU per decision %s of per call's", perCore,
								masters, 100 * utilisation, Double.isNaN(ratio) ? "n/a" : Figures.percent(ratio)),
				Double.isNaN(perCore) || Double.isNaN(ratio) ? "**not measured**"
						: (ratio <= 0.4 && masters <= 5) ? "**yes**" : "**no**");
	}

	private void verdict(String target, String measured, int misses, int missing, String why) {
		String met;
		if (missing > 0) {
			met = "**not measured** in the latest runs";
		}
		else if (misses == 0) {
			met = "**yes**";
		}
		else {
			met = "**no** (" + misses + (misses == 1 ? " miss)" : " misses)");
			this.misses.computeIfAbsent(why, (reason) -> new ArrayList<>()).add(target.replaceAll(" \\(section.*", ""));
		}
		this.table.row(target, measured, met);
	}

	private static String millis(double micros) {
		return Double.isNaN(micros) ? "n/a" : String.format(Locale.ROOT, "%.2f ms", micros / 1000);
	}

	private static List<String> modeNames() {
		return EngineBenchmark.MODES.stream().map(EngineBenchmark.Mode::name).toList();
	}

}
