package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 1: throughput and latency of this engine (every algorithm), the raw EVALSHA ceiling and bucket4j, side by
 * side in one run against one redis-server, blocking with 1 and 32 threads and non-blocking with 32 and 256 calls in
 * flight; the local backend with 1 and 32 threads.
 */
final class EngineBenchmark {

	record Mode(String name, boolean blocking, int concurrency) {
	}

	static final List<Mode> MODES = List.of(new Mode("blocking x1", true, 1), new Mode("blocking x32", true, 32),
			new Mode("non-blocking x32", false, 32), new Mode("non-blocking x256", false, 256));

	private final LoadDriver driver;

	EngineBenchmark(Duration warmup, Duration measure) {
		this.driver = new LoadDriver(warmup, measure);
	}

	Map<Scenario, List<LoadDriver.Result>> run(RedisServer redis) throws InterruptedException {
		Map<Scenario, List<LoadDriver.Result>> results = new LinkedHashMap<>();
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
				List<LoadDriver.Result> scenarioResults = new ArrayList<>();
				Map<String, Supplier<Contender>> redisContenders = new LinkedHashMap<>();
				redisContenders.put("raw", () -> new RawEvalShaContender(redis.uri(), scenario));
				List<Algorithm> algorithms = ((scenario == Scenario.ALLOWED) ? List.of(Algorithm.values())
						: List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA))
					.stream()
					.filter((algorithm) -> onlyAlgorithms.equals(List.of("")) || onlyAlgorithms.contains(algorithm.id()))
					.toList();
				for (Algorithm algorithm : algorithms) {
					redisContenders.put(algorithm.id(), () -> new EngineContender("ours " + algorithm.id(),
							new RedisRateLimitBackend(factory), algorithm, scenario));
				}
				for (Algorithm algorithm : algorithms) {
					if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.GCRA) {
						// what natural batching pays: the same engine sending every decision as its own call
						redisContenders.put(algorithm.id() + "-unbatched", () -> {
							RedisRateLimitBackend unbatched = new RedisRateLimitBackend(factory);
							unbatched.setBatching(false);
							return new EngineContender("ours " + algorithm.id() + " unbatched", unbatched, algorithm,
									scenario);
						});
					}
				}
				redisContenders.put("bucket4j", () -> new Bucket4jContender(redis.uri(), scenario));
				List<Contender> contenders = new ArrayList<>();
				for (Supplier<Contender> supplier : redisContenders.values()) {
					contenders.add(supplier.get());
				}
				for (Mode mode : MODES) {
					for (Contender contender : contenders) {
						scenarioResults.add(run(contender, mode, probe));
						System.out.printf("%-12s %-34s %-18s %,10.0f ops/s%n", scenario, contender.name(), mode.name(),
								scenarioResults.get(scenarioResults.size() - 1).opsPerSecond());
					}
				}
				contenders.forEach(Contender::close);
				if (scenario == Scenario.ALLOWED && withLocal) {
					for (Mode mode : List.of(MODES.get(0), MODES.get(1))) {
						for (Algorithm algorithm : Algorithm.values()) {
							Contender local = new EngineContender("local " + algorithm.id(),
									new LocalRateLimitBackend(1_000_000, LocalRateLimitBackend.systemClock()), algorithm,
									scenario);
							scenarioResults.add(run(local, mode, RedisProbe.none()));
							System.out.printf("%-12s %-34s %-18s %,10.0f ops/s%n", scenario, local.name(), mode.name(),
									scenarioResults.get(scenarioResults.size() - 1).opsPerSecond());
						}
					}
				}
				results.put(scenario, scenarioResults);
			}
		}
		finally {
			factory.destroy();
		}
		return results;
	}

	private LoadDriver.Result run(Contender contender, Mode mode, RedisProbe probe) throws InterruptedException {
		return mode.blocking() ? this.driver.blocking(contender, mode.concurrency(), probe)
				: this.driver.nonBlocking(contender, mode.concurrency(), probe);
	}

	static String report(Map<Scenario, List<LoadDriver.Result>> results) {
		StringBuilder out = new StringBuilder();
		for (Map.Entry<Scenario, List<LoadDriver.Result>> entry : results.entrySet()) {
			out.append("\n#### ").append(entry.getKey() == Scenario.ALLOWED ? "All decisions allowed" : "Half denied")
				.append("\n\n");
			Markdown table = new Markdown("contender", "mode", "ops/s", "p50 µs", "p99 µs", "p99.9 µs",
					"client CPU µs/op", "Redis CPU µs/op", "round trips/op", "denied");
			for (LoadDriver.Result r : entry.getValue()) {
				table.row(r.contender(), r.mode(), r.opsPerSecond(), r.p(50), r.p(99), r.p(99.9), r.clientCpuMicros(),
						r.redisCpuMicros(), r.roundTrips(), String.format("%.0f%%", 100.0 * r.denied() / Math.max(1, r.ops())));
			}
			out.append(table);
			out.append("\nRatios in the same run (token bucket):\n\n");
			Markdown ratios = new Markdown("mode", "ours / ceiling", "ours / bucket4j", "gcra / ceiling",
					"ours Redis CPU / ceiling Redis CPU");
			for (Mode mode : MODES) {
				LoadDriver.Result raw = find(entry.getValue(), "raw EVALSHA (ceiling)", mode.name());
				LoadDriver.Result ours = find(entry.getValue(), "ours token-bucket", mode.name());
				LoadDriver.Result gcra = find(entry.getValue(), "ours gcra", mode.name());
				LoadDriver.Result peer = find(entry.getValue(), "bucket4j 8.19 Lettuce", mode.name());
				ratios.row(mode.name(), Figures.percent(ours.opsPerSecond() / raw.opsPerSecond()),
						String.format("%.2fx", ours.opsPerSecond() / peer.opsPerSecond()),
						Figures.percent(gcra.opsPerSecond() / raw.opsPerSecond()),
						Figures.percent(ours.redisCpuMicros() / raw.redisCpuMicros()));
			}
			out.append(ratios);
		}
		return out.toString();
	}

	/**
	 * Records the ratios {@link Targets} judges: per scenario and mode, our token bucket and GCRA (batched and
	 * unbatched) against the raw ceiling and bucket4j, the p99s and Redis CPU per decision.
	 */
	static void figures(Map<Scenario, List<LoadDriver.Result>> results, Figures figures) {
		for (Map.Entry<Scenario, List<LoadDriver.Result>> entry : results.entrySet()) {
			String scenario = (entry.getKey() == Scenario.ALLOWED) ? "allowed" : "half-denied";
			for (Mode mode : MODES) {
				String at = "engine." + scenario + "." + Figures.part(mode.name()) + ".";
				LoadDriver.Result raw = find(entry.getValue(), "raw EVALSHA (ceiling)", mode.name());
				LoadDriver.Result peer = find(entry.getValue(), "bucket4j 8.19 Lettuce", mode.name());
				figures.put(at + "raw.ops", raw.opsPerSecond()).put(at + "raw.p99", raw.p(99));
				for (String algorithm : List.of("token-bucket", "gcra")) {
					for (String variant : List.of("", " unbatched")) {
						LoadDriver.Result ours = find(entry.getValue(), "ours " + algorithm + variant, mode.name());
						String name = at + algorithm + Figures.part(variant).replaceAll("^(.)", "-$1") + ".";
						figures.put(name + "ops", ours.opsPerSecond())
							.put(name + "ceiling", ours.opsPerSecond() / raw.opsPerSecond())
							.put(name + "bucket4j", ours.opsPerSecond() / peer.opsPerSecond())
							.put(name + "p99", ours.p(99))
							.put(name + "redis-cpu", ours.redisCpuMicros() / raw.redisCpuMicros())
							.put(name + "calls", ours.roundTrips());
					}
				}
			}
		}
	}

	static LoadDriver.Result find(List<LoadDriver.Result> results, String contender, String mode) {
		return results.stream()
			.filter((r) -> r.contender().equals(contender) && r.mode().equals(mode))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no result for " + contender + " " + mode));
	}

}
