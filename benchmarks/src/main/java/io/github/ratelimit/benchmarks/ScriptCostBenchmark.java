package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntConsumer;

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
 * time per EVALSHA ({@code INFO commandstats}) over sequential calls on 10,000 keys, for each of our scripts and for
 * the raw token-bucket script, also fed more arguments and returning more figures, to show where the difference
 * goes. The scripts take turns: every round measures each of them once, in an order rotated per round, so that the
 * drift of a shared machine falls on all of them alike; each figure is the median of the rounds, and each ratio the
 * median of the rounds' ratios to the raw script of the same round.
 */
final class ScriptCostBenchmark {

	static final String RAW = "raw token bucket (2 arguments, 2 figures back)";

	private static final int WARMUP = 20_000;

	/**
	 * Many short rounds: this machine's speed moves by 10 to 20% from one second to the next, so a round's ratio
	 * pairs calls made close together, and the median of many such ratios settles within a few percent.
	 */
	private static final int ROUNDS = 31;

	private static final int CALLS_PER_ROUND = 2_500;

	record Row(String script, double microsPerCall, double lowest, double highest, double toRaw) {
	}

	private record Script(String name, IntConsumer call) {
	}

	List<Row> run(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		RedisClient client = RedisClient.create(redis.uri());
		try (RedisProbe probe = new RedisProbe(redis.uri());
				StatefulRedisConnection<String, String> connection = client.connect()) {
			redis.flushAll();
			RateLimiter limiter = new DefaultRateLimiter(new RedisRateLimitBackend(factory));
			List<Script> scripts = new ArrayList<>();
			for (Algorithm algorithm : Algorithm.values()) {
				boolean entries = algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.CONCURRENCY;
				RateLimitPolicy policy = RateLimitPolicy.builder("cost-" + algorithm.id())
					.algorithm(algorithm)
					.limit(entries ? RateLimitPolicy.MAX_ENTRY_LIMIT : Scenario.OPEN_LIMIT)
					.window(Duration.ofMinutes(1))
					.build();
				scripts.add(new Script(
						"ours, " + algorithm.id() + (algorithm == Algorithm.CONCURRENCY ? " (acquire + release)" : ""),
						(i) -> limiter.check(RateLimitRequest.of(policy, "id" + (i % Scenario.IDENTITIES))).permit().release()));
			}
			String raw = RawEvalShaContender.SCRIPT;
			String rate = String.format("%.17g", Scenario.OPEN_LIMIT / 60e6);
			String capacity = Long.toString(Scenario.OPEN_LIMIT);
			scripts.add(raw(connection, RAW, raw, rate, capacity));
			String[] ours = { "a", "", "Xb3k9QaZ1LmP.1a", "tb", "1000000000", "60000000", "1000000000", "1", "0" };
			String elevenArguments = raw.replace("ARGV[1]", "ARGV[10]").replace("ARGV[2]", "ARGV[11]");
			String[] padded = Arrays.copyOf(ours, 11);
			padded[9] = rate;
			padded[10] = capacity;
			scripts.add(raw(connection, "raw token bucket fed 11 arguments (the generic driver: 9)", elevenArguments,
					padded));
			scripts.add(raw(connection, "raw token bucket returning 5 figures (ours: 5)",
					raw.replace("return {allowed, math.floor(tokens)}", "return {allowed, math.floor(tokens), 1, 2, 3}"),
					rate, capacity));
			// what our buckets stored until they named a refund's acquire by its time: the last taker's request id
			String storingId = raw.replace("local rate = tonumber(ARGV[1])", "local rate = tonumber(ARGV[2])")
				.replace("local capacity = tonumber(ARGV[2])", "local capacity = tonumber(ARGV[3])")
				.replace("string.format('%.17g', now))", "string.format('%.17g', now), 'q', ARGV[1])");
			scripts.add(raw(connection, "raw token bucket storing a request id (ours until now)", storingId,
					"Xb3k9QaZ1LmP.1a", rate, capacity));
			for (Script script : scripts) {
				for (int i = 0; i < WARMUP; i++) {
					script.call().accept(i);
				}
			}
			double[][] micros = new double[scripts.size()][ROUNDS];
			for (int round = 0; round < ROUNDS; round++) {
				for (int n = 0; n < scripts.size(); n++) {
					int s = (n + round) % scripts.size();
					micros[s][round] = measure(probe, scripts.get(s).call(), round * CALLS_PER_ROUND);
				}
			}
			int rawAt = scripts.stream().map(Script::name).toList().indexOf(RAW);
			List<Row> rows = new ArrayList<>();
			for (int s = 0; s < scripts.size(); s++) {
				double[] own = micros[s];
				double[] ratios = Rounds.ratios(ROUNDS, (round) -> own[round], (round) -> micros[rawAt][round]);
				rows.add(new Row(scripts.get(s).name(), Rounds.median(own), Rounds.lowest(own), Rounds.highest(own),
						Rounds.median(ratios)));
			}
			rows.forEach((row) -> System.out.printf("script %-58s %6.2f us/call %5.0f%% of raw%n", row.script(),
					row.microsPerCall(), 100 * row.toRaw()));
			return rows;
		}
		finally {
			client.shutdown();
			factory.destroy();
		}
	}

	private static Script raw(StatefulRedisConnection<String, String> connection, String name, String script,
			String... args) {
		String sha = connection.sync().scriptLoad(script);
		return new Script(name, (i) -> connection.sync()
			.evalsha(sha, ScriptOutputType.MULTI, new String[] { "raw:{id" + (i % Scenario.IDENTITIES) + "}" }, args));
	}

	/** The server's time per EVALSHA over one round of sequential calls, from its total, not its rounded mean. */
	private static double measure(RedisProbe probe, IntConsumer call, int from) {
		return probe.microsPerCall("evalsha", () -> {
			for (int i = from; i < from + CALLS_PER_ROUND; i++) {
				call.accept(i);
			}
		});
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("script", "Redis time per EVALSHA, µs (median of " + ROUNDS + " rounds)",
				"lowest to highest round", "of the raw script's (median of the rounds' ratios)");
		rows.forEach((row) -> table.row(row.script(), row.microsPerCall(),
				Markdown.format(row.lowest()) + " to " + Markdown.format(row.highest()), Figures.percent(row.toRaw())));
		return "Sequential calls on one connection, " + ROUNDS + " rounds of "
				+ String.format(java.util.Locale.ROOT, "%,d", CALLS_PER_ROUND)
				+ " calls per script, the scripts taking turns in an order rotated per round.\n\n" + table;
	}

	/** Records each script's time per call and its ratio to the raw script, for {@link Targets}. */
	static void figures(List<Row> rows, Figures figures) {
		for (Row row : rows) {
			String at = "script." + Figures.part(row.script().replaceAll(" \\(.*", "")) + ".";
			figures.put(at + "micros", row.microsPerCall()).put(at + "raw", row.toRaw());
		}
	}

}
