package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 1b: what a decision costs Redis itself, without the client or the network in the way: the server's own
 * {@code usec_per_call} of EVALSHA ({@code INFO commandstats}) over 50,000 sequential calls on 10,000 keys, for each
 * of our scripts and for the raw token-bucket script, also fed our number of arguments and returning our number of
 * figures, to show where the difference goes.
 */
final class ScriptCostBenchmark {

	private static final int WARMUP = 20_000;

	private static final int CALLS = 50_000;

	record Row(String script, double microsPerCall) {
	}

	List<Row> run(RedisServer redis) {
		List<Row> rows = new ArrayList<>();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		RedisClient client = RedisClient.create(redis.uri());
		try (RedisProbe probe = new RedisProbe(redis.uri());
				StatefulRedisConnection<String, String> connection = client.connect()) {
			RateLimiter limiter = new DefaultRateLimiter(new RedisRateLimitBackend(factory));
			for (Algorithm algorithm : Algorithm.values()) {
				boolean entries = algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.CONCURRENCY;
				RateLimitPolicy policy = RateLimitPolicy.builder("cost")
					.algorithm(algorithm)
					.limit(entries ? RateLimitPolicy.MAX_ENTRY_LIMIT : Scenario.OPEN_LIMIT)
					.window(Duration.ofMinutes(1))
					.build();
				redis.flushAll();
				double micros = measure(redis, probe,
						(i) -> limiter.check(RateLimitRequest.of(policy, "id" + (i % Scenario.IDENTITIES))).permit().release());
				rows.add(new Row("ours, " + algorithm.id() + (algorithm == Algorithm.CONCURRENCY ? " (acquire + release)" : ""),
						micros));
			}
			String raw = RawEvalShaContender.SCRIPT;
			String rate = String.format("%.17g", Scenario.OPEN_LIMIT / 60e6);
			String capacity = Long.toString(Scenario.OPEN_LIMIT);
			rows.add(raw(redis, probe, connection, "raw token bucket (2 arguments, 2 figures back)", raw, rate, capacity));
			String[] ours = { "a", "", "Xb3k9QaZ1LmP.1a", "tb", "1000000000", "60000000", "1000000000", "1", "0" };
			String elevenArguments = raw.replace("ARGV[1]", "ARGV[10]").replace("ARGV[2]", "ARGV[11]");
			String[] padded = java.util.Arrays.copyOf(ours, 11);
			padded[9] = rate;
			padded[10] = capacity;
			rows.add(raw(redis, probe, connection, "raw token bucket fed 11 arguments (ours: 9)", elevenArguments, padded));
			rows.add(raw(redis, probe, connection, "raw token bucket returning 7 figures (ours: 7)",
					raw.replace("return {allowed, math.floor(tokens)}",
							"return {allowed, math.floor(tokens), 1, 2, 3, 4, 5}"),
					rate, capacity));
		}
		finally {
			client.shutdown();
			factory.destroy();
		}
		rows.forEach((row) -> System.out.printf("script %-52s %6.2f us/call%n", row.script(), row.microsPerCall()));
		return rows;
	}

	private static Row raw(RedisServer redis, RedisProbe probe, StatefulRedisConnection<String, String> connection,
			String name, String script, String... args) {
		redis.flushAll();
		String sha = connection.sync().scriptLoad(script);
		return new Row(name, measure(redis, probe, (i) -> connection.sync()
			.evalsha(sha, ScriptOutputType.MULTI, new String[] { "raw:{id" + (i % Scenario.IDENTITIES) + "}" }, args)));
	}

	private static double measure(RedisServer redis, RedisProbe probe, java.util.function.IntConsumer call) {
		for (int i = 0; i < WARMUP; i++) {
			call.accept(i);
		}
		probe.connection().sync().configResetstat();
		for (int i = 0; i < CALLS; i++) {
			call.accept(i);
		}
		for (String line : probe.connection().sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:")) {
				int at = line.indexOf("usec_per_call=") + 14;
				return Double.parseDouble(line.substring(at, line.indexOf(',', at)));
			}
		}
		throw new IllegalStateException("No EVALSHA in INFO commandstats");
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("script", "Redis time per EVALSHA, µs");
		rows.forEach((row) -> table.row(row.script(), row.microsPerCall()));
		return table.toString();
	}

}
