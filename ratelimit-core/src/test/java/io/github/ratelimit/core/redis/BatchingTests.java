package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Natural batching: a batch decides its calls exactly as the same calls made one by one, and acquires made
 * concurrently, which the backend batches, are admitted exactly up to the limit, on a real Redis.
 */
class BatchingTests {

	private static final long T0 = 1_800_000_000_000_000L;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		RedisServer server = RedisServers.standalone();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void disconnect() {
		factory.destroy();
	}

	static List<RateLimitPolicy> policies() {
		return List.of(
				RateLimitPolicy.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).limit(7).window(Duration.ofMillis(700)).burst(5).build(),
				RateLimitPolicy.builder("gc").algorithm(Algorithm.GCRA).limit(9).window(Duration.ofMillis(1300)).burst(4).build(),
				RateLimitPolicy.builder("sl").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(6).window(Duration.ofMillis(900))
					.minInterval(Duration.ofMillis(20)).build(),
				RateLimitPolicy.builder("sc").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(5).window(Duration.ofMillis(1000)).build(),
				RateLimitPolicy.builder("fw").algorithm(Algorithm.FIXED_WINDOW).limit(4).window(Duration.ofMillis(500)).build(),
				RateLimitPolicy.builder("cc").algorithm(Algorithm.CONCURRENCY).limit(3).window(Duration.ofMillis(400)).build());
	}

	@Test
	void aBatchDecidesItsCallsExactlyAsTheSameCallsOneByOne() {
		LuaScripts scripts = new LuaScripts();
		RedisRateLimitBackend keys = new RedisRateLimitBackend(factory);
		Random random = new Random(7L);
		long now = T0;
		for (int round = 0; round < 60; round++) {
			now += random.nextInt(200_000);
			for (RateLimitPolicy policy : policies()) {
				int n = 2 + random.nextInt(20);
				List<String> batchKeys = new ArrayList<>();
				List<String> singleKeys = new ArrayList<>();
				List<String> batchArgs = new ArrayList<>(List.of(Long.toString(now)));
				List<String[]> singleArgs = new ArrayList<>();
				for (int i = 0; i < n; i++) {
					String identity = "id" + random.nextInt(3);
					String cost = Long.toString(1 + random.nextInt((int) Math.min(3, policy.capacity())));
					batchKeys.add("batch:" + keys.key(policy, identity));
					singleKeys.add("single:" + keys.key(policy, identity));
					batchArgs.add(cost);
					singleArgs.add(new String[] { cost, Long.toString(now) });
				}
				LuaScripts.PolicyScripts own = scripts.forSingleEntry(policy);
				List<Long> batch = ScriptReply.toLongs(redis.execute(own.batch(), batchKeys, batchArgs.toArray()));
				// four figures per call, and the first sequence number taken where the algorithm keeps entries
				int figures = policy.algorithm().keepsEntries() ? 5 : 4;
				assertThat(batch).hasSize(1 + figures * n);
				for (int i = 0; i < n; i++) {
					List<Long> single = ScriptReply.toLongs(
							redis.execute(own.single(), List.of(singleKeys.get(i)), (Object[]) singleArgs.get(i)));
					List<Long> expected = new ArrayList<>(List.of(batch.get(0)));
					expected.addAll(batch.subList(1 + figures * i, 1 + figures * (i + 1)));
					assertThat(expected).as("%s, call %d of %d, round %d", policy.name(), i, n, round)
						.isEqualTo(single);
				}
			}
		}
	}

	@Test
	void requestsOfOneBatchAtOneMicrosecondTakeDistinctMembersAndGiveBackOnlyTheirOwn() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory, "same-us:");
		RateLimitPolicy policy = RateLimitPolicy.builder("permits").algorithm(Algorithm.CONCURRENCY).limit(10)
			.window(Duration.ofMinutes(1)).build();
		String key = backend.key(policy, "someone");
		LuaScripts.PolicyScripts own = new LuaScripts().forSingleEntry(policy);
		// three requests of one identity in one batch, at the batch's one server time, of costs 1, 2 and 1
		List<Long> reply = ScriptReply
			.toLongs(redis.execute(own.batch(), List.of(key, key, key), "", "1", "2", "1"));
		long now = reply.get(0);
		assertThat(List.of(reply.get(1), reply.get(6), reply.get(11))).containsOnly(1L);
		assertThat(List.of(reply.get(5), reply.get(10), reply.get(15))).as("the first number of each")
			.containsExactly(1L, 2L, 4L);
		assertThat(redis.opsForZSet().rangeByScore(key, now, now)).containsExactlyInAnyOrder("1", "2", "3", "4");
		// the second request's release gives back its two members and nothing of the others, and nothing more when
		// it is sent again
		List<RateLimitRequest.Entry> second = RateLimitRequest.builder().add(policy, "someone", 2).build().entries();
		backend.release(second, "second", List.of(now), List.of(2L)).block();
		backend.release(second, "second", List.of(now), List.of(2L)).block();
		assertThat(redis.opsForZSet().rangeByScore(key, now, now)).containsExactlyInAnyOrder("1", "4");
		assertThat(redis.opsForZSet().score(key, "#")).as("the sequence").isEqualTo(-4.0);
	}

	@Test
	void concurrentPermitsAreBatchedAndEveryReleaseGivesBackItsOwn() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory, "batched-permits:");
		backend.connect();
		RateLimiter limiter = new DefaultRateLimiter(backend);
		RateLimitPolicy policy = RateLimitPolicy.builder("permits").algorithm(Algorithm.CONCURRENCY).limit(30)
			.window(Duration.ofMinutes(5)).build();
		int identities = 5;
		List<RateLimitDecision> decisions = Flux.range(0, 1000)
			.flatMap((i) -> limiter.checkAsync(RateLimitRequest.of(policy, "id" + (i % identities))), 256)
			.collectList()
			.block(Duration.ofSeconds(60));
		Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
		decisions.stream().filter(RateLimitDecision::allowed)
			.forEach((d) -> admitted.computeIfAbsent(d.decisions().get(0).identity(), (k) -> new AtomicInteger()).incrementAndGet());
		assertThat(admitted).hasSize(identities);
		assertThat(admitted.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(30));
		Flux.fromIterable(decisions).flatMap((d) -> d.permit().releaseAsync()).blockLast(Duration.ofSeconds(60));
		for (int i = 0; i < identities; i++) {
			String key = backend.key(policy, "id" + i);
			assertThat(redis.opsForZSet().count(key, 0, Double.POSITIVE_INFINITY)).as("permits held").isZero();
			assertThat(redis.opsForZSet().score(key, "#")).as("30 numbers given out").isEqualTo(-30.0);
		}
	}

	@Test
	void concurrentAcquiresAreBatchedAndAdmittedExactlyUpToTheLimit() throws Exception {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory, "batched:");
		backend.connect();
		RateLimiter limiter = new DefaultRateLimiter(backend);
		// a full bucket of 40 per identity that refills one token an hour: exactly 40 admissions each
		RateLimitPolicy policy = RateLimitPolicy.builder("hourly").algorithm(Algorithm.TOKEN_BUCKET).limit(1)
			.window(Duration.ofHours(1)).burst(40).build();
		int identities = 25;
		int decisions = 4000;
		long callsBefore = scriptCalls();
		Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
		List<RateLimitDecision> nonBlocking = Flux.range(0, decisions / 2)
			.flatMap((i) -> limiter.checkAsync(RateLimitRequest.of(policy, "id" + (i % identities))), 256)
			.collectList()
			.block(Duration.ofSeconds(60));
		nonBlocking.stream().filter(RateLimitDecision::allowed)
			.forEach((d) -> admitted.computeIfAbsent(d.decisions().get(0).identity(), (k) -> new AtomicInteger()).incrementAndGet());
		ExecutorService threads = Executors.newFixedThreadPool(32);
		try {
			List<Future<RateLimitDecision>> blocking = new ArrayList<>();
			for (int i = decisions / 2; i < decisions; i++) {
				String identity = "id" + (i % identities);
				blocking.add(threads.submit(() -> limiter.check(RateLimitRequest.of(policy, identity))));
			}
			for (Future<RateLimitDecision> future : blocking) {
				RateLimitDecision decision = future.get();
				if (decision.allowed()) {
					admitted.computeIfAbsent(decision.decisions().get(0).identity(), (k) -> new AtomicInteger())
						.incrementAndGet();
				}
			}
		}
		finally {
			threads.shutdownNow();
		}
		long calls = scriptCalls() - callsBefore;
		assertThat(admitted).hasSize(identities);
		admitted.forEach((identity, count) -> assertThat(count.get()).as(identity).isEqualTo(40));
		assertThat(calls).as("script calls for %d decisions", decisions).isLessThan(decisions);
	}

	@Test
	void withoutBatchingEveryAcquireIsItsOwnCall() {
		RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory)
			.keyPrefix("unbatched:")
			.batching(false)
			.build();
		backend.connect();
		RateLimiter limiter = new DefaultRateLimiter(backend);
		RateLimitPolicy policy = RateLimitPolicy.builder("p").algorithm(Algorithm.GCRA).limit(1000).window(Duration.ofSeconds(1)).build();
		limiter.check(RateLimitRequest.of(policy, "loads the script"));
		long before = scriptCalls();
		Flux.range(0, 500).flatMap((i) -> limiter.checkAsync(RateLimitRequest.of(policy, "id" + (i % 7))), 64)
			.blockLast(Duration.ofSeconds(30));
		assertThat(scriptCalls() - before).isEqualTo(500);
	}

	@Test
	void aClusterAdmitsExactlyUpToTheLimit() {
		RedisClusterServer cluster = RedisServers.cluster();
		LettuceConnectionFactory clusterFactory = new LettuceConnectionFactory(new RedisClusterConfiguration(
				cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList()));
		clusterFactory.afterPropertiesSet();
		clusterFactory.start();
		try {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(clusterFactory, "cluster-batching:");
			backend.connect();
			RateLimiter limiter = new DefaultRateLimiter(backend);
			RateLimitPolicy policy = RateLimitPolicy.builder("p").algorithm(Algorithm.TOKEN_BUCKET).limit(5).window(Duration.ofHours(1)).build();
			List<RateLimitDecision> decisions = Flux.range(0, 300)
				.flatMap((i) -> limiter.checkAsync(RateLimitRequest.of(policy, "id" + (i % 10))), 64)
				.collectList()
				.block(Duration.ofSeconds(30));
			assertThat(decisions.stream().filter(RateLimitDecision::allowed).count()).isEqualTo(50);
		}
		finally {
			clusterFactory.destroy();
		}
	}

	/** EVALSHA and EVAL calls so far, from the server's own counters. */
	private static long scriptCalls() {
		String stats = redis.execute((RedisCallback<String>) (connection) -> connection.serverCommands()
			.info("commandstats").toString());
		long calls = 0;
		for (String name : List.of("cmdstat_evalsha=", "cmdstat_eval=")) {
			int at = stats.indexOf(name);
			if (at >= 0) {
				int start = stats.indexOf("calls=", at) + 6;
				calls += Long.parseLong(stats.substring(start, stats.indexOf(',', start)));
			}
		}
		return calls;
	}

}
