package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.testkit.RedisServer;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 1: throughput and latency of this engine (every algorithm), the raw EVALSHA ceiling and bucket4j, side by
 * side in one run against one redis-server, blocking with 1 and 32 threads and non-blocking with 32 and 256 calls in
 * flight; the local backend with 1 and 32 threads.
 * <p>
 * The contenders whose ratios {@link Targets} judges (the ceiling, our token bucket and GCRA, batched and unbatched,
 * our batched token bucket recording every decision into the top denials, and bucket4j) run in rounds: in each, every mode in turn and in each mode those contenders one after the other,
 * their order rotated from one round to the next (as in {@link IndependentHarness}). A ratio is the median of the
 * rounds' ratios, each pairing two measurements taken seconds apart, so that the machine's drift over the section
 * moves single rounds rather than the result. The other algorithms and the local backend, reported but not judged,
 * run once each after the rounds.
 */
final class EngineBenchmark {

	record Mode(String name, boolean blocking, int concurrency) {
	}

	static final List<Mode> MODES = List.of(new Mode("blocking x1", true, 1), new Mode("blocking x32", true, 32),
			new Mode("non-blocking x32", false, 32), new Mode("non-blocking x256", false, 256));

	static final String RAW = "raw EVALSHA (ceiling)";

	static final String BUCKET4J = "bucket4j 8.19 Lettuce";

	/** Our batched token bucket recording every decision into a {@link TopDenials}, as the enforcer does. */
	static final String TOP_ON = "ours token-bucket, top on";

	/** Our algorithms whose ratios the targets judge, batched and unbatched. */
	static final List<Algorithm> JUDGED = List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA);

	/**
	 * One contender's measurements in one mode: one per round for the contenders in the rounds, a single one for the
	 * others.
	 */
	record Measurements(String contender, String mode, List<LoadDriver.Result> rounds) {

		/** The median of a figure over the rounds. */
		double median(ToDoubleFunction<LoadDriver.Result> figure) {
			return Rounds.median(this.rounds.stream().mapToDouble(figure).toArray());
		}

		double opsPerSecond() {
			return median(LoadDriver.Result::opsPerSecond);
		}

		/**
		 * This contender's figure over another's, round by round (measured in the same round, seconds apart).
		 * @param other the other contender in the same mode
		 * @param figure the figure
		 * @return one ratio per round
		 */
		double[] over(Measurements other, ToDoubleFunction<LoadDriver.Result> figure) {
			return Rounds.ratios(Math.min(this.rounds.size(), other.rounds.size()),
					(round) -> figure.applyAsDouble(this.rounds.get(round)),
					(round) -> figure.applyAsDouble(other.rounds.get(round)));
		}

	}

	/**
	 * What a run measured: per scenario, every contender and mode in the tables' order.
	 * @param scenarios the measurements per scenario
	 * @param rounds the rounds of the judged contenders
	 * @param warmup each judged contender's warm-up per scenario, blocking and non-blocking, before the rounds
	 * @param settle the unmeasured start of every measurement
	 * @param measure the length of every measurement
	 */
	record Outcome(Map<Scenario, List<Measurements>> scenarios, int rounds, Duration warmup, Duration settle,
			Duration measure) {
	}

	private final int rounds;

	private final Duration warmup;

	private final Duration settle;

	private final Duration measure;

	private final LoadDriver driver;

	/**
	 * A run of 5 rounds of 1 s settling and 3 s measured per contender and mode ({@code -Dbench.engine.rounds}
	 * changes the rounds); {@code quick}: one round of 0.5 s and 1 s.
	 * @param quick whether to run the short smoke test
	 */
	EngineBenchmark(boolean quick) {
		this.rounds = Integer.getInteger("bench.engine.rounds", quick ? 1 : 5);
		this.warmup = Duration.ofMillis(quick ? 500 : 1000);
		this.settle = Duration.ofMillis(quick ? 500 : 1000);
		this.measure = Duration.ofMillis(quick ? 1000 : 3000);
		this.driver = new LoadDriver(this.settle, this.measure);
	}

	Outcome run(RedisServer redis) throws InterruptedException {
		Map<Scenario, List<Measurements>> scenarios = new LinkedHashMap<>();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			// -Dbench.scenarios=ALLOWED, -Dbench.algorithms=token-bucket,gcra, -Dbench.local=false narrow a run
			// down while iterating; the published results use the defaults (everything)
			List<String> onlyScenarios = List.of(System.getProperty("bench.scenarios", "ALLOWED,HALF_DENIED").split(","));
			List<String> onlyAlgorithms = List.of(System.getProperty("bench.algorithms", "").split(","));
			boolean withLocal = Boolean.parseBoolean(System.getProperty("bench.local", "true"));
			for (Scenario scenario : Scenario.values()) {
				if (!onlyScenarios.contains(scenario.name())) {
					continue;
				}
				redis.flushAll();
				List<Algorithm> algorithms = ((scenario == Scenario.ALLOWED) ? List.of(Algorithm.values()) : JUDGED)
					.stream()
					.filter((algorithm) -> onlyAlgorithms.equals(List.of("")) || onlyAlgorithms.contains(algorithm.id()))
					.toList();
				// the tables' order: the ceiling, ours per algorithm, ours unbatched, bucket4j
				List<Contender> contenders = new ArrayList<>();
				contenders.add(new RawEvalShaContender(redis.uri(), scenario));
				for (Algorithm algorithm : algorithms) {
					contenders.add(new EngineContender(ours(algorithm, false), new RedisRateLimitBackend(factory),
							algorithm, scenario));
				}
				for (Algorithm algorithm : algorithms) {
					if (JUDGED.contains(algorithm)) {
						// what natural batching pays: the same engine sending every decision as its own call
						RedisRateLimitBackend unbatched = RedisRateLimitBackend.builder(factory).batching(false).build();
						contenders.add(new EngineContender(ours(algorithm, true), unbatched, algorithm, scenario));
					}
				}
				if (algorithms.contains(Algorithm.TOKEN_BUCKET)) {
					// what the top limited identities cost the check: the enforcer's consumer of decisions, at the
					// defaults of ratelimit.top (64 identities per policy, one minute)
					TopDenials top = new TopDenials(TopDenialsBenchmark.CAPACITY, Duration.ofMinutes(1));
					contenders.add(new EngineContender(TOP_ON, new RedisRateLimitBackend(factory),
							Algorithm.TOKEN_BUCKET, scenario, top));
				}
				contenders.add(new Bucket4jContender(redis.uri(), scenario));
				Map<String, Measurements> measured = new LinkedHashMap<>();
				for (Mode mode : MODES) {
					for (Contender contender : contenders) {
						measured.put(contender.name() + "|" + mode.name(),
								new Measurements(contender.name(), mode.name(), new ArrayList<>()));
					}
				}
				List<Contender> inRounds = contenders.stream().filter((contender) -> judged(contender.name())).toList();
				LoadDriver warming = new LoadDriver(Duration.ZERO, this.warmup);
				for (Contender contender : inRounds) {
					// not reported: the JIT, the connections, the scripts
					warming.nonBlocking(contender, 32, RedisProbe.none());
					warming.blocking(contender, 32, RedisProbe.none());
				}
				for (int round = 0; round < this.rounds; round++) {
					for (Mode mode : MODES) {
						for (Contender contender : Rounds.rotated(inRounds, round)) {
							measure(measured, scenario, "round " + (round + 1), contender, mode, probe);
						}
					}
				}
				for (Mode mode : MODES) {
					for (Contender contender : contenders) {
						if (!inRounds.contains(contender)) {
							measure(measured, scenario, "once", contender, mode, probe);
						}
					}
				}
				contenders.forEach(Contender::close);
				if (scenario == Scenario.ALLOWED && withLocal) {
					for (Mode mode : List.of(MODES.get(0), MODES.get(1))) {
						for (Algorithm algorithm : Algorithm.values()) {
							Contender local = new EngineContender("local " + algorithm.id(),
									new LocalRateLimitBackend(1_000_000, LocalRateLimitBackend.systemClock()), algorithm,
									scenario);
							measured.put(local.name() + "|" + mode.name(),
									new Measurements(local.name(), mode.name(), new ArrayList<>()));
							measure(measured, scenario, "once", local, mode, RedisProbe.none());
						}
					}
				}
				scenarios.put(scenario, List.copyOf(measured.values()));
			}
		}
		finally {
			factory.destroy();
		}
		return new Outcome(scenarios, this.rounds, this.warmup, this.settle, this.measure);
	}

	private void measure(Map<String, Measurements> measured, Scenario scenario, String round, Contender contender,
			Mode mode, RedisProbe probe) throws InterruptedException {
		LoadDriver.Result result = mode.blocking() ? this.driver.blocking(contender, mode.concurrency(), probe)
				: this.driver.nonBlocking(contender, mode.concurrency(), probe);
		Measurements measurements = measured.get(contender.name() + "|" + mode.name());
		if (measurements == null) {
			throw new IllegalStateException("no place for " + contender.name() + " " + mode.name());
		}
		measurements.rounds().add(result);
		System.out.printf(Locale.ROOT, "%-12s %-8s %-34s %-18s %,10.0f ops/s%n", scenario, round, contender.name(),
				mode.name(), result.opsPerSecond());
	}

	/** The name of our contender with an algorithm on Redis. */
	static String ours(Algorithm algorithm, boolean unbatched) {
		return "ours " + algorithm.id() + (unbatched ? " unbatched" : "");
	}

	/** Whether a contender runs in the rounds: the ceiling, bucket4j and ours whose ratios the targets judge. */
	static boolean judged(String contender) {
		return contender.equals(RAW) || contender.equals(BUCKET4J) || contender.equals(TOP_ON) || JUDGED.stream()
			.anyMatch((algorithm) -> contender.equals(ours(algorithm, false)) || contender.equals(ours(algorithm, true)));
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		out.append("\nThe contenders the targets judge (the raw EVALSHA ceiling, ours token-bucket and gcra, batched and")
			.append(" unbatched, ours token-bucket recording every decision into the top denials, and bucket4j) ran in ")
			.append(outcome.rounds() == 1 ? "one round" : outcome.rounds() + " rounds")
			.append(", after a warm-up of each (")
			.append(seconds(outcome.warmup()))
			.append(" non-blocking x32 and ")
			.append(seconds(outcome.warmup()))
			.append(" blocking x32, not reported): ")
			.append(outcome.rounds() == 1 ? "every mode in turn, and in each mode those contenders one after the other."
					: "in each round every mode in turn, and in each mode those contenders one after the other, their"
							+ " order rotated by one place from one round to the next.")
			.append(" Every measurement settles for ")
			.append(seconds(outcome.settle()))
			.append(" and measures ")
			.append(seconds(outcome.measure()))
			.append(". Their rows below are the medians of the rounds, column by column; a ratio is the median of the")
			.append(" rounds' ratios, each pairing two measurements taken seconds apart, with the lowest and the")
			.append(" highest round beside it. The other algorithms and the local backend ran once each, after the")
			.append(" rounds.\n");
		for (Map.Entry<Scenario, List<Measurements>> entry : outcome.scenarios().entrySet()) {
			List<Measurements> measured = entry.getValue();
			out.append("\n#### ").append(entry.getKey() == Scenario.ALLOWED ? "All decisions allowed" : "Half denied")
				.append("\n\n");
			Markdown table = new Markdown("contender", "mode", "ops/s", "p50 µs", "p99 µs", "p99.9 µs",
					"client CPU µs/op", "Redis CPU µs/op", "round trips/op", "denied");
			for (Measurements m : measured) {
				table.row(m.contender(), m.mode(), m.opsPerSecond(), m.median((r) -> r.p(50)), m.median((r) -> r.p(99)),
						m.median((r) -> r.p(99.9)), m.median(LoadDriver.Result::clientCpuMicros),
						m.median(LoadDriver.Result::redisCpuMicros), m.median(LoadDriver.Result::roundTrips),
						Figures.percent(m.median((r) -> (double) r.denied() / Math.max(1, r.ops()))));
			}
			out.append(table);
			out.append("\nRatios in the same rounds: the median of the rounds' ratios, and the lowest to the highest")
				.append(" round (ours = token bucket):\n\n");
			Markdown ratios = new Markdown("mode", "ours / ceiling", "per round", "ours / bucket4j", "per round",
					"gcra / ceiling", "per round", "gcra / bucket4j", "per round", "ours Redis CPU / ceiling Redis CPU");
			for (Mode mode : MODES) {
				Measurements raw = find(measured, RAW, mode.name());
				Measurements peer = find(measured, BUCKET4J, mode.name());
				Measurements ours = measured(measured, ours(Algorithm.TOKEN_BUCKET, false), mode.name());
				Measurements gcra = measured(measured, ours(Algorithm.GCRA, false), mode.name());
				double[] oursToRaw = over(ours, raw, LoadDriver.Result::opsPerSecond);
				double[] oursToPeer = over(ours, peer, LoadDriver.Result::opsPerSecond);
				double[] gcraToRaw = over(gcra, raw, LoadDriver.Result::opsPerSecond);
				double[] gcraToPeer = over(gcra, peer, LoadDriver.Result::opsPerSecond);
				ratios.row(mode.name(), Figures.percent(Rounds.median(oursToRaw)),
						Rounds.range(oursToRaw, Figures::percent), Figures.times(Rounds.median(oursToPeer)),
						Rounds.range(oursToPeer, Figures::times), Figures.percent(Rounds.median(gcraToRaw)),
						Rounds.range(gcraToRaw, Figures::percent), Figures.times(Rounds.median(gcraToPeer)),
						Rounds.range(gcraToPeer, Figures::times),
						Figures.percent(Rounds.median(over(ours, raw, LoadDriver.Result::redisCpuMicros))));
			}
			out.append(ratios);
			out.append(topOnOff(measured));
			if (outcome.rounds() > 1) {
				out.append("\nEvery round (ops/s):\n\n");
				List<String> inRounds = measured.stream()
					.map(Measurements::contender)
					.filter(EngineBenchmark::judged)
					.distinct()
					.toList();
				List<String> header = new ArrayList<>(List.of("mode", "round"));
				header.addAll(inRounds);
				Markdown every = new Markdown(header.toArray(String[]::new));
				for (Mode mode : MODES) {
					for (int round = 0; round < outcome.rounds(); round++) {
						List<Object> row = new ArrayList<>(List.of(mode.name(), round + 1));
						for (String contender : inRounds) {
							List<LoadDriver.Result> results = find(measured, contender, mode.name()).rounds();
							row.add((round < results.size()) ? (Object) results.get(round).opsPerSecond() : "n/a");
						}
						every.row(row.toArray());
					}
				}
				out.append(every);
			}
		}
		return out.toString();
	}

	/**
	 * The top denials on against off: ours token bucket recording every decision over the same without, round by
	 * round (empty when a narrowed run left the token bucket out).
	 */
	private static String topOnOff(List<Measurements> measured) {
		Markdown table = new Markdown("mode", "top on / off", "per round", "top on ops/s", "off ops/s",
				"top on client CPU µs/op", "off client CPU µs/op");
		boolean any = false;
		for (Mode mode : MODES) {
			Measurements on = measured(measured, TOP_ON, mode.name());
			Measurements off = measured(measured, ours(Algorithm.TOKEN_BUCKET, false), mode.name());
			if (on == null || off == null) {
				continue;
			}
			any = true;
			double[] ratio = on.over(off, LoadDriver.Result::opsPerSecond);
			table.row(mode.name(), Figures.percent(Rounds.median(ratio)), Rounds.range(ratio, Figures::percent),
					on.opsPerSecond(), off.opsPerSecond(), on.median(LoadDriver.Result::clientCpuMicros),
					off.median(LoadDriver.Result::clientCpuMicros));
		}
		return any ? "\nThe top limited identities on against off (ours token bucket, batched, recording every decision"
				+ " into a `TopDenials` of the default 64 identities and one minute as the enforcer does), in the"
				+ " same rounds:\n\n" + table : "";
	}

	/**
	 * Records the figures {@link Targets} judges and the prose quotes: per scenario and mode, the ceiling's ops/s and
	 * p99 (medians of the rounds), and our token bucket and GCRA (batched and unbatched): ops/s, p99 and round trips
	 * per decision (medians of the rounds), the median of the rounds' ratios to the ceiling ({@code ceiling}, with
	 * {@code ceiling-lowest} and {@code ceiling-highest}), to bucket4j ({@code bucket4j}, same) and of Redis CPU per
	 * decision to the ceiling's ({@code redis-cpu}); the token bucket with the top denials on over off
	 * ({@code token-bucket-top.off}, with {@code -lowest} and {@code -highest}). An algorithm a narrowed run left out
	 * has no figures.
	 */
	static void figures(Outcome outcome, Figures figures) {
		figures.put("engine.rounds", Integer.toString(outcome.rounds()));
		for (Map.Entry<Scenario, List<Measurements>> entry : outcome.scenarios().entrySet()) {
			String scenario = (entry.getKey() == Scenario.ALLOWED) ? "allowed" : "half-denied";
			for (Mode mode : MODES) {
				String at = "engine." + scenario + "." + Figures.part(mode.name()) + ".";
				Measurements raw = find(entry.getValue(), RAW, mode.name());
				Measurements peer = find(entry.getValue(), BUCKET4J, mode.name());
				figures.put(at + "raw.ops", raw.opsPerSecond()).put(at + "raw.p99", raw.median((r) -> r.p(99)));
				for (Algorithm algorithm : JUDGED) {
					for (boolean unbatched : new boolean[] { false, true }) {
						Measurements ours = measured(entry.getValue(), ours(algorithm, unbatched), mode.name());
						if (ours == null) {
							continue;
						}
						String name = at + algorithm.id() + (unbatched ? "-unbatched" : "") + ".";
						double[] toCeiling = ours.over(raw, LoadDriver.Result::opsPerSecond);
						double[] toPeer = ours.over(peer, LoadDriver.Result::opsPerSecond);
						figures.put(name + "ops", ours.opsPerSecond())
							.put(name + "ceiling", Rounds.median(toCeiling))
							.put(name + "ceiling-lowest", Rounds.lowest(toCeiling))
							.put(name + "ceiling-highest", Rounds.highest(toCeiling))
							.put(name + "bucket4j", Rounds.median(toPeer))
							.put(name + "bucket4j-lowest", Rounds.lowest(toPeer))
							.put(name + "bucket4j-highest", Rounds.highest(toPeer))
							.put(name + "p99", ours.median((r) -> r.p(99)))
							.put(name + "redis-cpu", Rounds.median(ours.over(raw, LoadDriver.Result::redisCpuMicros)))
							.put(name + "calls", ours.median(LoadDriver.Result::roundTrips));
					}
				}
				topFigures(entry.getValue(), mode, at, figures);
			}
		}
	}

	private static void topFigures(List<Measurements> measured, Mode mode, String at, Figures figures) {
		Measurements on = measured(measured, TOP_ON, mode.name());
		Measurements off = measured(measured, ours(Algorithm.TOKEN_BUCKET, false), mode.name());
		if (on != null && off != null) {
			double[] ratio = on.over(off, LoadDriver.Result::opsPerSecond);
			figures.put(at + "token-bucket-top.ops", on.opsPerSecond())
				.put(at + "token-bucket-top.off", Rounds.median(ratio))
				.put(at + "token-bucket-top.off-lowest", Rounds.lowest(ratio))
				.put(at + "token-bucket-top.off-highest", Rounds.highest(ratio));
		}
	}

	/** A contender's measurements in a mode, which the run must have made. */
	static Measurements find(List<Measurements> measured, String contender, String mode) {
		Measurements found = measured(measured, contender, mode);
		if (found == null) {
			throw new IllegalStateException("no result for " + contender + " " + mode);
		}
		return found;
	}

	/** A contender's measurements in a mode, null when a narrowed run left it out. */
	static @Nullable Measurements measured(List<Measurements> measured, String contender, String mode) {
		return measured.stream()
			.filter((m) -> m.contender().equals(contender) && m.mode().equals(mode))
			.findFirst()
			.orElse(null);
	}

	/** The rounds' ratios of a contender a narrowed run may have left out: none then. */
	private static double[] over(@Nullable Measurements ours, Measurements other,
			ToDoubleFunction<LoadDriver.Result> figure) {
		return (ours != null) ? ours.over(other, figure) : new double[0];
	}

	private static String seconds(Duration duration) {
		return String.format(Locale.ROOT, "%s s", (duration.toMillis() % 1000 == 0) ? Long.toString(duration.toSeconds())
				: Double.toString(duration.toMillis() / 1000.0));
	}

}
