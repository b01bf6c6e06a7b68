package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section {@code harness}: the acceptance check, written apart from the engine section (its own contenders,
 * load loops and counting, nothing shared with {@link EngineBenchmark} but the table printer and the rounds' order and
 * medians of {@link Rounds}), so that a bias of that section's driver would show as a disagreement between the two.
 * <p>
 * One token-bucket limit for all three contenders: capacity 100, refilled 10 per second, on 10,000 keys chosen at
 * random per call, each contender on one Lettuce connection of its own to the same {@code redis-server}:
 * <ul>
 * <li><b>ours</b>, through the public API only: {@code new DefaultRateLimiter(new RedisRateLimitBackend(factory))}
 * (unguarded) over a Spring Data Redis {@link LettuceConnectionFactory}, a {@link RateLimitRequest} built per
 * call;</li>
 * <li><b>raw</b>: a token-bucket Lua script of this class sent with Lettuce's {@code EVALSHA}, the ceiling;</li>
 * <li><b>bucket4j</b> 8.x on Lettuce ({@code bucket4j_jdk17-lettuce}, compare-and-swap), a proxy per call.</li>
 * </ul>
 * Loads: every decision allowed (10,000 keys at 10 per second each admit up to 100,000 decisions per second), and
 * half denied: the odd keys are exhausted beforehand (a request of cost 100) and, so that they stay exhausted
 * while they are hit a few times per second, are refilled 10 per <em>hour</em> (same capacity). Modes: blocking
 * with 1 and 32 threads, non-blocking with 32 and 256 calls in flight. Rounds: in each, every mode, every
 * contender, the contenders' order rotated from one round to the next; a round's ratios pair measurements taken
 * seconds apart, and the table reports their median.
 */
final class IndependentHarness {

	static final int KEYS = 10_000;

	static final long CAPACITY = 100;

	static final long REFILL = 10;

	static final Duration REFILL_PERIOD = Duration.ofSeconds(1);

	/** The exhausted keys' refill period in the half-denied load. */
	static final Duration EXHAUSTED_REFILL_PERIOD = Duration.ofHours(1);

	static final String OURS = "ours (DefaultRateLimiter)";

	static final String RAW = "raw Lettuce EVALSHA";

	static final String BUCKET4J = "bucket4j 8.19 Lettuce";

	enum Load {

		ALL_ALLOWED("all allowed"), HALF_DENIED("half denied");

		private final String label;

		Load(String label) {
			this.label = label;
		}

		boolean exhausted(int key) {
			return this == HALF_DENIED && (key % 2) == 1;
		}

	}

	record Mode(String name, boolean blocking, int concurrency) {
	}

	static final List<Mode> MODES = List.of(new Mode("blocking x1", true, 1), new Mode("blocking x32", true, 32),
			new Mode("non-blocking x32", false, 32), new Mode("non-blocking x256", false, 256));

	/** One contender's measurement in one mode and round. */
	record Sample(Load load, Mode mode, int round, String contender, double opsPerSecond, double deniedShare,
			long errors) {
	}

	/** What a run measured, and on what. */
	record Outcome(List<Sample> samples, String redisVersion, int rounds, Duration measure) {
	}

	private final Duration warmup;

	private final Duration settle;

	private final Duration measure;

	private final int rounds;

	IndependentHarness(boolean quick) {
		this.warmup = Duration.ofSeconds(quick ? 1 : 3);
		this.settle = Duration.ofMillis(quick ? 300 : 1000);
		this.measure = Duration.ofSeconds(quick ? 1 : 5);
		this.rounds = quick ? 1 : 3;
	}

	Outcome run(RedisServer redis) throws InterruptedException {
		List<Sample> samples = new ArrayList<>();
		String version;
		RedisClient infoClient = RedisClient.create(redis.uri());
		try (StatefulRedisConnection<String, String> info = infoClient.connect()) {
			version = serverVersion(info.sync().info("server"));
		}
		finally {
			infoClient.shutdown();
		}
		for (Load load : Load.values()) {
			redis.flushAll();
			List<Limiter> limiters = List.of(new Ours(redis, load), new Raw(redis, load), new Bucket4j(redis, load));
			try {
				for (Limiter limiter : limiters) {
					// not reported: the JIT, the connections, the scripts
					drive(limiter, MODES.get(2), this.warmup);
					drive(limiter, MODES.get(1), this.warmup);
				}
				for (int round = 0; round < this.rounds; round++) {
					for (Mode mode : MODES) {
						for (Limiter limiter : Rounds.rotated(limiters, round)) {
							ClosedLoop.Counts counts = drive(limiter, mode, this.measure);
							Sample sample = new Sample(load, mode, round, limiter.name(), counts.perSecond(),
									counts.deniedShare(), counts.errors());
							samples.add(sample);
							System.out.printf(Locale.ROOT, "harness %-12s round %d %-18s %-26s %,10.0f ops/s %4.0f%% denied%n",
									load.label, round + 1, mode.name(), limiter.name(), sample.opsPerSecond(),
									100 * sample.deniedShare());
						}
					}
				}
			}
			finally {
				limiters.forEach(Limiter::close);
			}
		}
		return new Outcome(samples, version, this.rounds, this.measure);
	}

	private static String serverVersion(String info) {
		return info.lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.map((line) -> line.substring("redis_version:".length()).trim())
			.findFirst()
			.orElse("unknown");
	}

	private ClosedLoop.Counts drive(Limiter limiter, Mode mode, Duration length) throws InterruptedException {
		return ClosedLoop.run(limiter, KEYS, mode.blocking(), mode.concurrency(), this.settle, length, () -> {
		}, () -> {
		});
	}

	/** A contender: one decision for a key, blocking or not. */
	private interface Limiter extends ClosedLoop.Call {

		String name();

		void close();

	}

	/** This project's engine through its public API, unguarded, on Spring Data Redis' Lettuce factory. */
	private static final class Ours implements Limiter {

		private final LettuceConnectionFactory factory;

		private final RedisRateLimitBackend backend;

		private final DefaultRateLimiter limiter;

		private final RateLimitPolicy open;

		private final RateLimitPolicy exhausted;

		private final String[] identities = new String[KEYS];

		private final Load load;

		Ours(RedisServer redis, Load load) {
			this.load = load;
			this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
			this.factory.afterPropertiesSet();
			this.factory.start();
			this.backend = new RedisRateLimitBackend(this.factory);
			this.backend.connect();
			this.limiter = new DefaultRateLimiter(this.backend);
			this.open = tokenBucket("harness", REFILL_PERIOD);
			this.exhausted = tokenBucket("harness-exhausted", EXHAUSTED_REFILL_PERIOD);
			for (int key = 0; key < KEYS; key++) {
				this.identities[key] = "user-" + key;
				if (load.exhausted(key)) {
					RateLimitDecision taken = this.limiter.check(
							RateLimitRequest.builder().add(this.exhausted, this.identities[key], CAPACITY).build());
					if (!taken.allowed()) {
						throw new IllegalStateException("could not exhaust " + this.identities[key]);
					}
				}
			}
		}

		private static RateLimitPolicy tokenBucket(String name, Duration period) {
			return RateLimitPolicy.builder(name)
				.algorithm(Algorithm.TOKEN_BUCKET)
				.limit(REFILL)
				.window(period)
				.burst(CAPACITY)
				.build();
		}

		private RateLimitRequest request(int key) {
			return RateLimitRequest.of(this.load.exhausted(key) ? this.exhausted : this.open, this.identities[key]);
		}

		@Override
		public String name() {
			return OURS;
		}

		@Override
		public boolean blocking(int key) {
			return this.limiter.check(request(key)).allowed();
		}

		@Override
		public CompletableFuture<Boolean> async(int key) {
			return this.limiter.checkAsync(request(key)).map(RateLimitDecision::allowed).toFuture();
		}

		@Override
		public void close() {
			this.backend.stop();
			this.factory.destroy();
		}

	}

	/**
	 * The ceiling: the least a token bucket in Redis does per decision, in one script: read the server's clock and
	 * the key's two fields, refill, take one token and write both fields back with the key's expiry when admitted;
	 * a denial writes nothing and answers the wait. Two arguments (capacity, tokens per microsecond), two figures
	 * back.
	 */
	private static final class Raw implements Limiter {

		static final String TOKEN_BUCKET = """
				local capacity = tonumber(ARGV[1])
				local perMicro = tonumber(ARGV[2])
				local clock = redis.call('TIME')
				local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
				local held = redis.call('HMGET', KEYS[1], 'n', 'at')
				local tokens = capacity
				if held[1] then
				  local elapsed = now - tonumber(held[2])
				  if elapsed < 0 then elapsed = 0 end
				  tokens = math.min(capacity, tonumber(held[1]) + elapsed * perMicro)
				end
				if tokens < 1 then
				  return {0, math.ceil((1 - tokens) / perMicro)}
				end
				tokens = tokens - 1
				redis.call('HSET', KEYS[1], 'n', tokens, 'at', now)
				redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / perMicro / 1000))
				return {1, math.floor(tokens)}
				""";

		private final RedisClient client;

		private final StatefulRedisConnection<String, String> connection;

		private final String sha;

		private final String[] openArguments;

		private final String[] exhaustedArguments;

		private final String[] identities = new String[KEYS];

		private final Load load;

		Raw(RedisServer redis, Load load) {
			this.load = load;
			this.client = RedisClient.create(redis.uri());
			this.connection = this.client.connect();
			this.sha = this.connection.sync().scriptLoad(TOKEN_BUCKET);
			this.openArguments = arguments(REFILL_PERIOD);
			this.exhaustedArguments = arguments(EXHAUSTED_REFILL_PERIOD);
			List<String> clock = this.connection.sync().time();
			String now = Long.toString(Long.parseLong(clock.get(0)) * 1_000_000 + Long.parseLong(clock.get(1)));
			for (int key = 0; key < KEYS; key++) {
				this.identities[key] = "user-" + key;
				if (load.exhausted(key)) {
					// the script's own state for an empty bucket: no tokens as of now
					String name = key(key);
					this.connection.sync().hset(name, java.util.Map.of("n", "0", "at", now));
					this.connection.sync().expire(name, EXHAUSTED_REFILL_PERIOD.multipliedBy(CAPACITY / REFILL));
				}
			}
		}

		private static String[] arguments(Duration period) {
			double perMicro = (double) REFILL / (period.toNanos() / 1000.0);
			return new String[] { Long.toString(CAPACITY), Double.toString(perMicro) };
		}

		private String key(int key) {
			return "raw:" + this.identities[key];
		}

		@Override
		public String name() {
			return RAW;
		}

		@Override
		public boolean blocking(int key) {
			List<Long> reply = this.connection.sync().evalsha(this.sha, ScriptOutputType.MULTI,
					new String[] { key(key) }, this.load.exhausted(key) ? this.exhaustedArguments : this.openArguments);
			return reply.get(0) == 1L;
		}

		@Override
		public CompletableFuture<Boolean> async(int key) {
			return this.connection.async()
				.<List<Long>>evalsha(this.sha, ScriptOutputType.MULTI, new String[] { key(key) },
						this.load.exhausted(key) ? this.exhaustedArguments : this.openArguments)
				.thenApply((reply) -> reply.get(0) == 1L)
				.toCompletableFuture();
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	/**
	 * bucket4j's Lettuce proxy manager (compare-and-swap), buckets expiring once refilled, a proxy built per call as
	 * its documentation shows.
	 */
	private static final class Bucket4j implements Limiter {

		private final RedisClient client;

		private final StatefulRedisConnection<byte[], byte[]> connection;

		private final LettuceBasedProxyManager<byte[]> proxies;

		private final AsyncProxyManager<byte[]> asyncProxies;

		private final Supplier<BucketConfiguration> open;

		private final Supplier<BucketConfiguration> exhausted;

		private final Supplier<CompletableFuture<BucketConfiguration>> openAsync;

		private final Supplier<CompletableFuture<BucketConfiguration>> exhaustedAsync;

		private final byte[][] keys = new byte[KEYS][];

		private final Load load;

		Bucket4j(RedisServer redis, Load load) {
			this.load = load;
			this.client = RedisClient.create(redis.uri());
			this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
			this.proxies = Bucket4jLettuce.casBasedBuilder(this.connection)
				.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
				.build();
			this.asyncProxies = this.proxies.asAsync();
			BucketConfiguration openConfiguration = configuration(REFILL_PERIOD);
			BucketConfiguration exhaustedConfiguration = configuration(EXHAUSTED_REFILL_PERIOD);
			this.open = () -> openConfiguration;
			this.exhausted = () -> exhaustedConfiguration;
			this.openAsync = () -> CompletableFuture.completedFuture(openConfiguration);
			this.exhaustedAsync = () -> CompletableFuture.completedFuture(exhaustedConfiguration);
			for (int key = 0; key < KEYS; key++) {
				this.keys[key] = ("b4j:user-" + key).getBytes(StandardCharsets.UTF_8);
				if (load.exhausted(key) && !this.proxies.builder().build(this.keys[key], this.exhausted).tryConsume(CAPACITY)) {
					throw new IllegalStateException("could not exhaust bucket4j key " + key);
				}
			}
		}

		private static BucketConfiguration configuration(Duration period) {
			return BucketConfiguration.builder()
				.addLimit((limit) -> limit.capacity(CAPACITY).refillGreedy(REFILL, period))
				.build();
		}

		@Override
		public String name() {
			return BUCKET4J;
		}

		@Override
		public boolean blocking(int key) {
			return this.proxies.builder()
				.build(this.keys[key], this.load.exhausted(key) ? this.exhausted : this.open)
				.tryConsume(1);
		}

		@Override
		public CompletableFuture<Boolean> async(int key) {
			return this.asyncProxies.builder()
				.build(this.keys[key], this.load.exhausted(key) ? this.exhaustedAsync : this.openAsync)
				.tryConsume(1);
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder();
		out.append("Independent harness: token bucket, capacity ").append(CAPACITY).append(", refilled ").append(REFILL)
			.append(" per second, ").append(String.format(Locale.ROOT, "%,d", KEYS))
			.append(" keys at random; three contenders on one redis-server **")
			.append(outcome.redisVersion())
			.append("** (its own `INFO server`), ")
			.append(outcome.rounds())
			.append(outcome.rounds() == 1 ? " round" : " rounds")
			.append(" of ")
			.append(outcome.measure().toSeconds())
			.append(" s per contender and mode, the order rotated per round; ")
			.append(Runtime.getRuntime().availableProcessors())
			.append(" cores, JDK ")
			.append(System.getProperty("java.version"))
			.append(", ")
			.append(Instant.now())
			.append(".\n\n");
		out.append("Ratios are the median of each round's ratio (measurements seconds apart); ops/s are medians of the"
				+ " rounds. Targets: ours >= 90% of raw, ours > 1.0x bucket4j.\n\n");
		Markdown table = new Markdown("load", "mode", "ours ops/s", "raw ops/s", "bucket4j ops/s", "ours / raw",
				"per round", ">= 90%", "ours / bucket4j", "per round", "> 1.0x", "denied (ours / raw / bucket4j)");
		for (Load load : Load.values()) {
			for (Mode mode : MODES) {
				List<Sample> samples = samples(outcome, load, mode);
				if (samples.isEmpty()) {
					continue;
				}
				double[] toRaw = perRound(samples, RAW, outcome.rounds());
				double[] toBucket4j = perRound(samples, BUCKET4J, outcome.rounds());
				double rawRatio = Rounds.median(toRaw);
				double bucket4jRatio = Rounds.median(toBucket4j);
				table.row(load.label, mode.name(), median(samples, OURS), median(samples, RAW),
						median(samples, BUCKET4J), Figures.percent(rawRatio), Rounds.range(toRaw, Figures::percent),
						(rawRatio >= 0.90) ? "met" : "**not met**", Figures.times(bucket4jRatio),
						Rounds.range(toBucket4j, Figures::times),
						(bucket4jRatio > 1.0) ? "met" : "**not met**",
						denied(samples, OURS) + " / " + denied(samples, RAW) + " / " + denied(samples, BUCKET4J));
			}
		}
		out.append(table);
		long errors = outcome.samples().stream().mapToLong(Sample::errors).sum();
		out.append("\nErrors during the measurements: ").append(errors).append(".\n");
		out.append("\nEvery measurement (ops/s):\n\n");
		Markdown all = new Markdown("load", "round", "mode", OURS, RAW, BUCKET4J);
		for (Load load : Load.values()) {
			for (int round = 0; round < outcome.rounds(); round++) {
				for (Mode mode : MODES) {
					int r = round;
					List<Sample> samples = outcome.samples()
						.stream()
						.filter((s) -> s.load() == load && s.mode().equals(mode) && s.round() == r)
						.toList();
					if (!samples.isEmpty()) {
						all.row(load.label, round + 1, mode.name(), find(samples, OURS, round).opsPerSecond(),
								find(samples, RAW, round).opsPerSecond(), find(samples, BUCKET4J, round).opsPerSecond());
					}
				}
			}
		}
		out.append(all);
		out.append("\nJVM arguments: `")
			.append(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()))
			.append("`\n");
		return out.toString();
	}

	/**
	 * Records, per load and mode, the medians of ours over raw and over bucket4j that {@link Targets} judges.
	 */
	static void figures(Outcome outcome, Figures figures) {
		for (Load load : Load.values()) {
			for (Mode mode : MODES) {
				List<Sample> samples = samples(outcome, load, mode);
				if (!samples.isEmpty()) {
					String at = "harness." + Figures.part(load.label) + "." + Figures.part(mode.name()) + ".";
					double[] toRaw = perRound(samples, RAW, outcome.rounds());
					figures.put(at + "raw", Rounds.median(toRaw))
						.put(at + "raw-lowest", Rounds.lowest(toRaw))
						.put(at + "raw-highest", Rounds.highest(toRaw))
						.put(at + "bucket4j", Rounds.median(perRound(samples, BUCKET4J, outcome.rounds())));
				}
			}
		}
	}

	/** The samples of one load and mode, every round and contender. */
	private static List<Sample> samples(Outcome outcome, Load load, Mode mode) {
		return outcome.samples().stream().filter((s) -> s.load() == load && s.mode().equals(mode)).toList();
	}

	/** Ours over another contender, round by round. */
	private static double[] perRound(List<Sample> samples, String other, int rounds) {
		return Rounds.ratios(rounds, (round) -> find(samples, OURS, round).opsPerSecond(),
				(round) -> find(samples, other, round).opsPerSecond());
	}

	private static Sample find(List<Sample> samples, String contender, int round) {
		return samples.stream()
			.filter((s) -> s.contender().equals(contender) && s.round() == round)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no sample of " + contender + " in round " + round));
	}

	private static double median(List<Sample> samples, String contender) {
		return Rounds.median(samples.stream()
			.filter((s) -> s.contender().equals(contender))
			.mapToDouble(Sample::opsPerSecond)
			.toArray());
	}

	private static String denied(List<Sample> samples, String contender) {
		double share = Rounds.median(samples.stream()
			.filter((s) -> s.contender().equals(contender))
			.mapToDouble(Sample::deniedShare)
			.toArray());
		return Figures.percent(share);
	}

}
