package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts of single-entry acquires (one per set of policy parameters; straight through for the token bucket and
 * GCRA) against the driver every other request takes: on a real standalone server and a real Cluster, a random
 * trace with explicit time gets the same decisions, figure for figure, and leaves the same state in Redis.
 */
class SingleEntryScriptTests {

	private static final long T0 = 1_800_000_000_000_000L;

	private static final List<LettuceConnectionFactory> FACTORIES = new ArrayList<>();

	static Stream<String> servers() {
		return Stream.of("standalone", "cluster");
	}

	@AfterAll
	static void stopFactories() {
		FACTORIES.forEach(LettuceConnectionFactory::destroy);
	}

	private static LettuceConnectionFactory factory(String server) {
		LettuceConnectionFactory factory;
		if (server.equals("cluster")) {
			RedisClusterServer cluster = RedisServers.cluster();
			factory = new LettuceConnectionFactory(new RedisClusterConfiguration(
					cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList()));
		}
		else {
			RedisServer standalone = RedisServers.standalone();
			factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(standalone.host(), standalone.port()));
		}
		factory.afterPropertiesSet();
		factory.start();
		FACTORIES.add(factory);
		return factory;
	}

	private static List<RateLimitPolicy> policies() {
		return List.of(
				RateLimitPolicy.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).limit(7).window(Duration.ofMillis(700)).burst(12).build(),
				RateLimitPolicy.builder("tb1").algorithm(Algorithm.TOKEN_BUCKET).limit(3).window(Duration.ofMillis(333)).build(),
				RateLimitPolicy.builder("gc").algorithm(Algorithm.GCRA).limit(9).window(Duration.ofMillis(1300)).burst(4).build(),
				RateLimitPolicy.builder("gc1").algorithm(Algorithm.GCRA).limit(1).window(Duration.ofMillis(90)).build(),
				RateLimitPolicy.builder("sl").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(6).window(Duration.ofMillis(900))
					.minInterval(Duration.ofMillis(20)).build(),
				RateLimitPolicy.builder("sc").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(11).window(Duration.ofMillis(1000)).build(),
				RateLimitPolicy.builder("fw").algorithm(Algorithm.FIXED_WINDOW).limit(8).window(Duration.ofMillis(500)).build(),
				RateLimitPolicy.builder("cc").algorithm(Algorithm.CONCURRENCY).limit(3).window(Duration.ofMillis(400)).build());
	}

	@ParameterizedTest
	@MethodSource("servers")
	void singleEntryScriptsDecideAndWriteExactlyAsTheDriver(String server) {
		LettuceConnectionFactory factory = factory(server);
		StringRedisTemplate redis = new StringRedisTemplate(factory);
		RedisRateLimitBackend single = new RedisRateLimitBackend(factory, "single:");
		RedisRateLimitBackend driver = RedisRateLimitBackend.builder(factory)
			.keyPrefix("driver:")
			.singleEntryScripts(false)
			.build();
		List<RateLimitPolicy> policies = policies();
		List<String> identities = List.of("u1", "u2", "a very {odd} identity\n");
		Random random = new Random(20261123L);
		long now = T0 + 987_653L;
		List<Held> held = new ArrayList<>();
		int admitted = 0;
		int denied = 0;
		for (int step = 0; step < 2000; step++) {
			now += random.nextInt(30_000);
			RateLimitPolicy policy = policies.get(random.nextInt(policies.size()));
			long cost = 1 + random.nextInt((int) Math.min(3, policy.capacity()));
			RateLimitRequest.Entry entry = new RateLimitRequest.Entry(policy, identities.get(random.nextInt(identities.size())), cost);
			RateLimitRequest request = RateLimitRequest.builder().add(entry.policy(), entry.identity(), cost).at(now).build();
			String requestId = "r" + step;
			Acquisition bySingle = single.acquire(request, requestId).block();
			Acquisition byDriver = driver.acquire(request, requestId).block();
			assertThat(figures(bySingle.decisions().get(0))).as("step %d, %s", step, policy.name())
				.isEqualTo(figures(byDriver.decisions().get(0)));
			assertThat(bySingle.timeMicros()).isEqualTo(byDriver.timeMicros());
			assertThat(bySingle.entrySequences()).as("step %d, %s", step, policy.name())
				.isEqualTo(byDriver.entrySequences());
			if (bySingle.decisions().get(0).allowed()) {
				admitted++;
				if (policy.algorithm().holdsPermits() || random.nextInt(10) == 0) {
					held.add(new Held(entry, requestId, bySingle.timeMicros(), bySingle.entrySequences().get(0)));
				}
			}
			else {
				denied++;
			}
			if (!held.isEmpty() && random.nextInt(3) == 0) {
				Held release = held.remove(random.nextInt(held.size()));
				single.release(List.of(release.entry), release.requestId, List.of(release.timeMicros),
						List.of(release.sequence)).block();
				driver.release(List.of(release.entry), release.requestId, List.of(release.timeMicros),
						List.of(release.sequence)).block();
			}
			if (step % 50 == 0) {
				for (RateLimitPolicy p : policies) {
					for (String identity : identities) {
						assertThat(state(redis, single.key(p, identity))).as("state of %s at step %d", p.name(), step)
							.isEqualTo(state(redis, driver.key(p, identity)));
					}
				}
			}
		}
		assertThat(admitted).isGreaterThan(300);
		assertThat(denied).isGreaterThan(200);
	}

	/**
	 * An admission that takes the last of a token bucket's or GCRA's quota says the retry-after a request of cost 1
	 * would get right after it (for a local denial cache): until shortly before it, such a request is denied; at it,
	 * admitted.
	 */
	@ParameterizedTest
	@MethodSource("servers")
	void anAdmissionThatTakesTheLastOfTheQuotaSaysHowLongTheNextIsDenied(String server) {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory(server), "exhausted:");
		Random random = new Random(11L);
		int checked = 0;
		for (int round = 0; round < 300; round++) {
			Algorithm algorithm = random.nextBoolean() ? Algorithm.TOKEN_BUCKET : Algorithm.GCRA;
			int limit = 1 + random.nextInt(9);
			RateLimitPolicy policy = RateLimitPolicy.builder("p" + round).algorithm(algorithm).limit(limit)
				.window(Duration.ofMillis(100 + random.nextInt(2000))).burst(1 + random.nextInt(4)).build();
			long now = T0 + round * 10_000_000L;
			long exhausted = 0;
			for (int i = 0; i < 10 && exhausted == 0; i++) {
				now += random.nextInt(5_000);
				long cost = 1 + random.nextInt((int) Math.min(2, policy.capacity()));
				Acquisition acquisition = backend.acquire(
						RateLimitRequest.builder().add(policy, "someone", cost).at(now).build(), "r" + round + "." + i).block();
				exhausted = acquisition.decisions().get(0).allowed() ? acquisition.exhaustedForMicros() : 0;
			}
			if (exhausted == 0) {
				continue;
			}
			checked++;
			List<PolicyDecision> right = backend.inspect(RateLimitRequest.builder().add(policy, "someone").at(now).build());
			assertThat(right.get(0).allowed()).as("%s right after", policy).isFalse();
			assertThat(right.get(0).retryAfter()).as("%s right after", policy).isEqualTo(Duration.ofNanos(exhausted * 1000));
			assertThat(right.get(0).remaining()).isZero();
			// the refill is floating-point arithmetic: a wait near a whole microsecond may be one more than exact, so a
			// cache answers until 2 us before the end (it stops 1 us early) and the backend from there
			if (exhausted > 2) {
				List<PolicyDecision> before = backend.inspect(RateLimitRequest.builder().add(policy, "someone").at(now + exhausted - 2).build());
				assertThat(before.get(0).allowed()).as("%s 2 us before the end", policy).isFalse();
				assertThat(before.get(0).retryAfter()).isBetween(Duration.ofNanos(1000), Duration.ofNanos(3000));
			}
			List<PolicyDecision> after = backend.inspect(RateLimitRequest.builder().add(policy, "someone").at(now + exhausted).build());
			assertThat(after.get(0).allowed()).as("%s at the end", policy).isTrue();
		}
		assertThat(checked).isGreaterThan(100);
	}

	/**
	 * The windowed algorithms' admissions say it too (sliding window counter, fixed window, sliding window log): the
	 * figure is, to the microsecond, the retry-after Redis gives a request of cost 1 at the same instant, and 0
	 * exactly when that request would be admitted; across the tolerance's edge (times on fractions of the window),
	 * windows and limits changed under the same key, and a clock that went back (a later window, entries ahead).
	 */
	@ParameterizedTest
	@MethodSource("servers")
	void aWindowedAdmissionThatTakesTheLastOfTheQuotaSaysHowLongTheNextIsDenied(String server) {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory(server), "exhausted-windows:");
		Random random = new Random(23L);
		List<Algorithm> algorithms = List.of(Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.FIXED_WINDOW,
				Algorithm.SLIDING_WINDOW_LOG);
		int[] checked = new int[algorithms.size()];
		int[] admittedNext = new int[algorithms.size()];
		for (int round = 0; round < 240; round++) {
			int which = round % algorithms.size();
			Algorithm algorithm = algorithms.get(which);
			String name = "w" + round;
			RateLimitPolicy policy = windowed(name, algorithm, random);
			long now = T0 + round * 100_000_000L + random.nextInt(1_000_000);
			boolean changed = false;
			for (int i = 0; i < 30; i++) {
				long window = policy.windowMicros();
				int move = random.nextInt(25);
				if (move == 0) {
					// another window and limit under the same key
					policy = windowed(name, algorithm, random);
					changed = true;
				}
				else if (move == 1) {
					// the clock went back
					now -= random.nextInt((int) (2 * window));
				}
				else if (move < 9) {
					// on a fraction of the window: where the weighted estimate lands on a whole number
					long step = window / (2 + random.nextInt(9));
					now = (now / step + 1 + random.nextInt(2)) * step;
				}
				else {
					now += random.nextInt((int) (window / policy.limit()) + 1);
				}
				long cost = 1 + random.nextInt((int) Math.min(2, policy.capacity()));
				Acquisition acquisition = backend.acquire(
						RateLimitRequest.builder().add(policy, "someone", cost).at(now).build(), "r" + round + "." + i).block();
				PolicyDecision admission = acquisition.decisions().get(0);
				if (!admission.allowed()) {
					continue;
				}
				long exhausted = acquisition.exhaustedForMicros();
				String step = policy + " at step " + i + " of round " + round;
				PolicyDecision right = backend.inspect(RateLimitRequest.builder().add(policy, "someone").at(now).build())
					.get(0);
				if (exhausted == 0) {
					// admitted, or (a sliding window log's minimum interval) denied with quota left before the end
					if (!right.allowed()) {
						assertThat(policy.minInterval()).as(step).isPositive();
					}
					else {
						admittedNext[which]++;
					}
					continue;
				}
				checked[which]++;
				assertThat(right.allowed()).as("%s right after", step).isFalse();
				assertThat(right.retryAfter()).as("%s right after", step).isEqualTo(Duration.ofNanos(exhausted * 1000));
				assertThat(right.remaining()).as(step).isZero();
				assertThat(right.resetAfter()).as("%s: the reset a cached denial reports", step)
					.isEqualTo(admission.resetAfter());
				if (exhausted > 1) {
					PolicyDecision before = backend.inspect(
							RateLimitRequest.builder().add(policy, "someone").at(now + exhausted - 1).build()).get(0);
					assertThat(before.allowed()).as("%s 1 us before the end", step).isFalse();
					assertThat(before.remaining()).as("%s 1 us before the end", step).isZero();
				}
				if (!changed) {
					// (after a change, counts of the old windows that overlap the new ones may outlast Redis's own
					// retry-after: then the request at the end asks Redis again, which says what remains)
					PolicyDecision after = backend.inspect(
							RateLimitRequest.builder().add(policy, "someone").at(now + exhausted).build()).get(0);
					assertThat(after.allowed()).as("%s at the end", step).isTrue();
				}
			}
		}
		System.out.printf("windowed exhaustion, %s: %s with the figure, %s without (admitted next)%n", server,
				Arrays.toString(checked), Arrays.toString(admittedNext));
		for (int i = 0; i < algorithms.size(); i++) {
			assertThat(checked[i]).as(algorithms.get(i).id()).isGreaterThan(100);
			assertThat(admittedNext[i]).as(algorithms.get(i).id()).isGreaterThan(100);
		}
	}

	/** A policy of a windowed algorithm: windows of whole microseconds divisible by 2 to 10, limits 1 to 9. */
	private static RateLimitPolicy windowed(String name, Algorithm algorithm, Random random) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).limit(1 + random.nextInt(9))
			.window(Duration.ofNanos(100_800_000L * (1 + random.nextInt(8))));
		if (algorithm == Algorithm.SLIDING_WINDOW_LOG && random.nextBoolean()) {
			builder.minInterval(Duration.ofMillis(1 + random.nextInt(60)));
		}
		return builder.build();
	}

	@Test
	void aSingleEntryAcquireRunsItsPolicysScriptAndNotTheDriver() {
		LettuceConnectionFactory factory = factory("standalone");
		StringRedisTemplate redis = new StringRedisTemplate(factory);
		redis.execute((RedisCallback<Void>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory, "which:");
		LuaScripts scripts = new LuaScripts();
		for (RateLimitPolicy policy : policies()) {
			assertThat(backend.acquire(RateLimitRequest.of(policy, "someone"), "id").block().decisions().get(0).allowed()).isTrue();
			String own = scripts.forSingleEntry(policy).single().getSha1();
			String driver = scripts.forAlgorithms(List.of(policy.algorithm())).getSha1();
			List<Boolean> loaded = redis.execute((RedisCallback<List<Boolean>>) (connection) -> connection.scriptingCommands()
				.scriptExists(own, driver));
			assertThat(loaded).as(policy.name()).containsExactly(true, false);
		}
	}

	@Test
	void beyondTheScriptCapRequestsOfOneEntryUseTheDriver() {
		LuaScripts scripts = new LuaScripts();
		for (int limit = 1; limit <= LuaScripts.MAX_SINGLE_ENTRY_SCRIPTS; limit++) {
			assertThat(scripts.forSingleEntry(RateLimitPolicy.builder("p").algorithm(Algorithm.FIXED_WINDOW).limit(limit).window(Duration.ofSeconds(1)).build()))
				.isNotNull();
		}
		RateLimitPolicy again = RateLimitPolicy.builder("other-name").algorithm(Algorithm.FIXED_WINDOW).limit(5).window(Duration.ofSeconds(1)).build();
		assertThat(scripts.forSingleEntry(again)).as("the same parameters under another name share a script").isNotNull();
		assertThat(scripts.forSingleEntry(RateLimitPolicy.builder("p").algorithm(Algorithm.FIXED_WINDOW).limit(100_000).window(Duration.ofSeconds(1)).build()))
			.isNull();
	}

	private static List<Object> figures(PolicyDecision decision) {
		return List.of(decision.allowed(), decision.remaining(), decision.resetAfter(), decision.retryAfter());
	}

	/** What a key holds, without its name: type, then content in a comparable form (TTL left out: it is rounded). */
	private static Object state(StringRedisTemplate redis, String key) {
		DataType type = redis.type(key);
		return switch (type) {
			case NONE -> "none";
			case STRING -> List.of("string", HexFormat.of().formatHex(redis.execute((RedisCallback<byte[]>) (connection) ->
					connection.stringCommands().get(key.getBytes(StandardCharsets.UTF_8)))));
			case HASH -> List.of("hash", new TreeMap<>(redis.opsForHash().entries(key)).toString());
			case ZSET -> {
				List<String> members = new ArrayList<>();
				for (TypedTuple<String> tuple : redis.opsForZSet().rangeWithScores(key, 0, -1)) {
					members.add(tuple.getValue() + "@" + tuple.getScore());
				}
				yield List.of("zset", members.toString());
			}
			default -> List.of(type.code(), "?");
		};
	}

	private record Held(RateLimitRequest.Entry entry, String requestId, long timeMicros, long sequence) {
	}

}
