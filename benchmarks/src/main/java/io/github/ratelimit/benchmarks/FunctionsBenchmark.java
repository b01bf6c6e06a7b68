package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * FCALL against EVALSHA ({@code ratelimit.redis.script-mode}) for the token bucket's single-entry script, on one
 * Redis 7 server: the server's own time per call ({@code INFO commandstats}: its total {@code usec} over its {@code calls}) over sequential
 * calls, and the throughput of blocking callers (batching on, as configured by default). The two modes alternate in
 * rounds, and which goes first alternates too, so drift of the machine hits both.
 * <p>
 * Run on its own ({@code main}, with the benchmarks' class path and {@code RATELIMIT_REDIS_SERVER} naming a Redis 7),
 * or from another runner with {@code new FunctionsBenchmark().run(redis)} and {@link #report}.
 */
final class FunctionsBenchmark {

	private static final int ROUNDS = 8;

	private static final int WARMUP = 20_000;

	private static final int CALLS = 40_000;

	private static final int THREADS = 16;

	private static final Duration THROUGHPUT_ROUND = Duration.ofSeconds(3);

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("fn-bench")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(Scenario.OPEN_LIMIT)
		.window(Duration.ofMinutes(1))
		.build();

	/**
	 * One mode's figures.
	 * @param mode the script mode
	 * @param microsPerCall Redis time per call in each round (sequential calls, unbatched)
	 * @param callsPerSecond decisions per second in each throughput round
	 */
	record Row(ScriptMode mode, double[] microsPerCall, double[] callsPerSecond) {
	}

	List<Row> run(RedisServer redis) {
		String version = redis.commands().info("server").lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.findFirst()
			.orElse("redis_version:?");
		if (version.startsWith("redis_version:6") || version.startsWith("redis_version:5")) {
			throw new IllegalStateException("FCALL needs Redis 7 or later; this is " + version);
		}
		ScriptMode[] modes = { ScriptMode.EVALSHA, ScriptMode.FUNCTIONS };
		double[][] micros = new double[2][ROUNDS];
		double[][] throughput = new double[2][ROUNDS];
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			Fixture[] fixtures = { new Fixture(redis, ScriptMode.EVALSHA), new Fixture(redis, ScriptMode.FUNCTIONS) };
			try {
				for (Fixture fixture : fixtures) {
					fixture.sequential(WARMUP);
				}
				for (int round = 0; round < ROUNDS; round++) {
					for (int k = 0; k < 2; k++) {
						int m = (round % 2 == 0) ? k : 1 - k;
						Fixture fixture = fixtures[m];
						micros[m][round] = probe.microsPerCall((m == 0) ? "evalsha" : "fcall",
								() -> fixture.sequential(CALLS));
					}
				}
				for (Fixture fixture : fixtures) {
					fixture.concurrent(Duration.ofSeconds(1));
				}
				for (int round = 0; round < ROUNDS; round++) {
					for (int k = 0; k < 2; k++) {
						int m = (round % 2 == 0) ? k : 1 - k;
						throughput[m][round] = fixtures[m].concurrent(THROUGHPUT_ROUND);
					}
				}
			}
			finally {
				for (Fixture fixture : fixtures) {
					fixture.factory.destroy();
				}
			}
		}
		List<Row> rows = new ArrayList<>();
		for (int m = 0; m < 2; m++) {
			rows.add(new Row(modes[m], micros[m], throughput[m]));
			System.out.printf("%-9s Redis us/call %s  decisions/s %s%n", modes[m], Arrays.toString(micros[m]),
					Arrays.toString(throughput[m]));
		}
		return rows;
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("script mode", "Redis time per call, µs (median of rounds)",
				"min–max over rounds", "decisions/s, " + THREADS + " threads (median)", "min–max over rounds");
		for (Row row : rows) {
			table.row(row.mode().name().toLowerCase(java.util.Locale.ROOT), Rounds.median(row.microsPerCall()),
					String.format("%.2f–%.2f", Rounds.lowest(row.microsPerCall()), Rounds.highest(row.microsPerCall())),
					Math.round(Rounds.median(row.callsPerSecond())),
					String.format("%.0f–%.0f", Rounds.lowest(row.callsPerSecond()), Rounds.highest(row.callsPerSecond())));
		}
		return table.toString();
	}

	/**
	 * Records FCALL over EVALSHA: the median of the rounds' ratios of Redis time per call, and of throughput.
	 */
	static void figures(List<Row> rows, Figures figures) {
		Row evalsha = rows.get(0);
		Row functions = rows.get(1);
		double[] time = Rounds.ratios(ROUNDS, (round) -> functions.microsPerCall()[round],
				(round) -> evalsha.microsPerCall()[round]);
		double[] rate = Rounds.ratios(ROUNDS, (round) -> functions.callsPerSecond()[round],
				(round) -> evalsha.callsPerSecond()[round]);
		figures.put("functions.time-ratio", Rounds.median(time))
			.put("functions.throughput-ratio", Rounds.median(rate))
			.put("functions.evalsha-micros", Rounds.median(evalsha.microsPerCall()))
			.put("functions.fcall-micros", Rounds.median(functions.microsPerCall()));
	}


	/** Backends of one script mode on their own connection: unbatched for sequential calls, batched for concurrent. */
	private static final class Fixture {

		final LettuceConnectionFactory factory;

		/** Sequential calls measure one script call each. */
		final RedisRateLimitBackend unbatched;

		final RedisRateLimitBackend batched;

		private long next;

		Fixture(RedisServer redis, ScriptMode mode) {
			this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
			this.factory.afterPropertiesSet();
			this.factory.start();
			this.unbatched = RedisRateLimitBackend.builder(this.factory).scriptMode(mode).batching(false).build();
			this.unbatched.connect();
			this.batched = RedisRateLimitBackend.builder(this.factory).scriptMode(mode).build();
			this.batched.connect();
		}

		void sequential(int calls) {
			for (int i = 0; i < calls; i++) {
				acquire();
			}
		}

		private void acquire() {
			long n = this.next++;
			this.unbatched.acquire(RateLimitRequest.of(POLICY, "id" + (n % Scenario.IDENTITIES)), "r" + n).block();
		}

		/** Blocking callers for a while; decisions per second. */
		double concurrent(Duration duration) {
			LongAdder done = new LongAdder();
			CountDownLatch start = new CountDownLatch(1);
			long end = System.nanoTime() + duration.toNanos();
			List<Thread> threads = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int offset = t * 100_000;
				Thread thread = new Thread(() -> {
					try {
						start.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return;
					}
					long i = offset;
					while (System.nanoTime() < end) {
						this.batched.acquire(RateLimitRequest.of(POLICY, "id" + (i++ % Scenario.IDENTITIES)), "c" + i).block();
						done.increment();
					}
				});
				thread.start();
				threads.add(thread);
			}
			long began = System.nanoTime();
			start.countDown();
			for (Thread thread : threads) {
				try {
					thread.join();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return done.sum() / ((System.nanoTime() - began) / 1e9);
		}

	}

	/**
	 * Runs the comparison on a server of its own and prints the table.
	 * @param args none
	 */
	public static void main(String[] args) {
		try (RedisServer redis = RedisServer.start()) {
			System.out.println(report(new FunctionsBenchmark().run(redis)));
		}
	}

}
