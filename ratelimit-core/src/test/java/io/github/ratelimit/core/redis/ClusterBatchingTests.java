package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisBinary;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Natural batching on a Cluster, on real Clusters of the test kit: a master's batch decides its calls exactly as the
 * same calls one by one, leaves a call whose key is not served there (another master's, or moved away by a
 * migration) undecided and untouched, and concurrent decisions stay exact while a slot migrates and after a
 * failover. On Redis 6.2, where nothing is batched, the same decisions are exact with one script call each.
 */
class ClusterBatchingTests {

	private static final long T0 = 1_800_000_000_000_000L;

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** A full bucket of 40 per identity that refills one token an hour: exactly 40 admissions each. */
	private static final RateLimitPolicy HOURLY = RateLimitPolicy.builder("hourly")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(1)
		.window(Duration.ofHours(1))
		.burst(40)
		.build();

	/** {@link #HOURLY} refusing when Redis cannot decide: an admission is one Redis made. */
	private static final RateLimitPolicy CLOSED_HOURLY = RateLimitPolicy.builder("closed-hourly")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(1)
		.window(Duration.ofHours(1))
		.burst(40)
		.failureMode(FailureMode.CLOSED)
		.build();

	private static final RateLimitKeys KEYS = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);

	private static RedisClient client;

	@BeforeAll
	static void client() {
		client = RedisClient.create();
	}

	@AfterAll
	static void shutdown() {
		client.shutdown();
	}

	private static boolean redis7() {
		return RedisBinary.get().version().isAtLeast(7, 0);
	}

	private static void assumeRedis7() {
		Assumptions.assumeTrue(redis7(), "batches of several slots need the allow-cross-slot-keys flag of Redis 7");
	}

	@Test
	void aMastersBatchDecidesItsCallsExactlyAsTheSameCallsOneByOne() {
		assumeRedis7();
		RedisClusterServer cluster = RedisServers.cluster();
		HostAndPort master = cluster.masters().get(0);
		LuaScripts scripts = new LuaScripts();
		Random random = new Random(11L);
		try (StatefulRedisConnection<String, String> connection = connect(master)) {
			RedisCommands<String, String> node = connection.sync();
			long now = T0;
			for (int round = 0; round < 40; round++) {
				now += random.nextInt(200_000);
				for (RateLimitPolicy policy : BatchingTests.policies()) {
					List<String> identities = identitiesOn(cluster, master, policy, 6, "r" + round + "-");
					int n = 2 + random.nextInt(20);
					List<String> keys = new ArrayList<>();
					List<String> costs = new ArrayList<>();
					for (int i = 0; i < n; i++) {
						keys.add(KEYS.key(policy, identities.get(random.nextInt(identities.size()))));
						costs.add(Long.toString(1 + random.nextInt((int) Math.min(3, policy.capacity()))));
					}
					LuaScripts.PolicyScripts own = scripts.forSingleEntry(policy);
					List<Long> batch = clusterBatch(node, own, "batch:", keys, costs, Long.toString(now));
					int figures = policy.algorithm().keepsEntries() ? 5 : 4;
					assertThat(batch).hasSize(1 + figures * n);
					for (int i = 0; i < n; i++) {
						List<Long> single = ScriptReply.toLongs(node.eval(own.single().getScriptAsString(),
								ScriptOutputType.MULTI, new String[] { "single:" + keys.get(i) }, costs.get(i),
								Long.toString(now)));
						List<Long> expected = new ArrayList<>(List.of(batch.get(0)));
						expected.addAll(batch.subList(1 + figures * i, 1 + figures * (i + 1)));
						assertThat(expected).as("%s, call %d of %d, round %d", policy.name(), i, n, round)
							.isEqualTo(single);
					}
				}
			}
		}
	}

	@Test
	void aBatchDecidesTheKeysItsMasterServesAndLeavesTheOthersUntouched() {
		assumeRedis7();
		RedisClusterServer cluster = RedisServers.cluster();
		HostAndPort master = cluster.masters().get(0);
		HostAndPort other = cluster.masters().get(1);
		LuaScripts.PolicyScripts own = new LuaScripts().forSingleEntry(HOURLY);
		List<String> here = identitiesOn(cluster, master, HOURLY, 3, "here-").stream()
			.map((identity) -> KEYS.key(HOURLY, identity))
			.toList();
		String elsewhere = KEYS.key(HOURLY, identitiesOn(cluster, other, HOURLY, 1, "elsewhere-").get(0));
		try (StatefulRedisConnection<String, String> connection = connect(master);
				StatefulRedisConnection<String, String> target = connect(other)) {
			RedisCommands<String, String> node = connection.sync();
			List<String> keys = List.of(here.get(0), here.get(1), elsewhere, here.get(2));
			assertThat(admits(clusterBatch(node, own, "", keys, List.of("1", "1", "1", "1"), "")))
				.as("another master's key undecided, the others decided").containsExactly(1L, 1L, -1L, 1L);
			assertThat(target.sync().exists(elsewhere)).as("the other master's key written").isZero();
			// a migrating slot: its key still here is decided here, a key not here (moved, or new) is not
			String migrating = here.get(1);
			String missing = migrating + ":new"; // the same hash tag: the same slot
			int slot = SlotHash.getSlot(migrating);
			whileMigrating(node, target.sync(), slot, () -> {
				assertThat(admits(clusterBatch(node, own, "", List.of(here.get(0), missing, migrating),
						List.of("1", "1", "1"), "")))
					.as("a key missing in a migrating slot undecided, one still in it decided")
					.containsExactly(1L, -1L, 1L);
				assertThat(node.clusterCountKeysInSlot(slot)).as("keys in the migrating slot").isEqualTo(1);
			});
			here.forEach(node::del);
		}
	}

	@Test
	void everyAlgorithmLeavesAKeyMissingInAMigratingSlotUndecidedAndUnwritten() {
		assumeRedis7();
		RedisClusterServer cluster = RedisServers.cluster();
		HostAndPort master = cluster.masters().get(0);
		HostAndPort other = cluster.masters().get(1);
		try (StatefulRedisConnection<String, String> connection = connect(master);
				StatefulRedisConnection<String, String> target = connect(other)) {
			RedisCommands<String, String> node = connection.sync();
			for (RateLimitPolicy policy : BatchingTests.policies()) {
				// the first command of sliding window log and concurrency writes (ZREMRANGEBYSCORE): it must fail
				List<String> keys = identitiesOn(cluster, master, policy, 2, "migrating-").stream()
					.map((identity) -> KEYS.key(policy, identity))
					.toList();
				String missing = keys.get(1) + ":new";
				int slot = SlotHash.getSlot(missing);
				whileMigrating(node, target.sync(), slot, () -> {
					long keysBefore = node.clusterCountKeysInSlot(slot);
					List<Long> reply = clusterBatch(node, new LuaScripts().forSingleEntry(policy), "",
							List.of(keys.get(0), missing), List.of("1", "1"), "");
					assertThat(admits(reply, policy.algorithm().keepsEntries() ? 5 : 4)).as(policy.name())
						.containsExactly(1L, -1L);
					assertThat(node.clusterCountKeysInSlot(slot)).as(policy.name()).isEqualTo(keysBefore);
					assertThat(target.sync().clusterCountKeysInSlot(slot)).as(policy.name()).isZero();
				});
				keys.forEach(node::del);
			}
		}
	}

	@Test
	void aGroupForANodeTheTopologyDoesNotKnowIsDecidedCallByCall() {
		RedisClusterServer cluster = RedisServers.cluster();
		LettuceConnectionFactory factory = factory(cluster);
		try {
			BackendConnection connection = new BackendConnection(factory);
			connection.open();
			assertThat(connection.node("0000000000000000000000000000000000000000"))
				.as("an unknown node fails the future, throws nothing").isCompletedExceptionally();
			ScriptTransport transport = new ScriptTransport(connection, RedisRateLimitBackend.ScriptMode.EVALSHA);
			ClusterBatching batching = new ClusterBatching(connection, transport);
			LuaScripts.PolicyScripts own = new LuaScripts().forSingleEntry(HOURLY);
			RateLimitKeys keys = new RateLimitKeys("cluster-unknown:");
			List<SingleEntryCall> calls = new ArrayList<>();
			List<CompletableFuture<List<Long>>> replies = new ArrayList<>();
			for (int i = 0; i < 45; i++) {
				String identity = "id" + (i % 3);
				calls.add(SingleEntryCall.of(own, keys.key(HOURLY, identity),
						RateLimitRequest.of(HOURLY, identity).entries().get(0), -1));
				replies.add(new CompletableFuture<>());
			}
			// a master id no longer in the topology: its queued calls go through the cluster connection
			batching.send("0000000000000000000000000000000000000000", calls, replies).get(60, TimeUnit.SECONDS);
			long admitted = replies.stream().filter((reply) -> reply.join().get(1) == 1L).count();
			assertThat(admitted).as("3 identities of 40 tokens, 15 calls each").isEqualTo(45);
			connection.stop();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			factory.destroy();
		}
	}

	/** Runs the checks while the slot is marked migrating from the node to the target, then marks it stable. */
	private static void whileMigrating(RedisCommands<String, String> node, RedisCommands<String, String> target,
			int slot, Runnable checks) {
		target.clusterSetSlotImporting(slot, node.clusterMyId());
		node.clusterSetSlotMigrating(slot, target.clusterMyId());
		try {
			checks.run();
		}
		finally {
			node.clusterSetSlotStable(slot);
			target.clusterSetSlotStable(slot);
		}
	}

	/** The admits figure of each call of a batch of the token bucket (four figures per call). */
	private static List<Long> admits(List<Long> reply) {
		return admits(reply, 4);
	}

	/** The admits figure of each call of a batch whose calls have the given number of figures. */
	private static List<Long> admits(List<Long> reply, int figures) {
		List<Long> admits = new ArrayList<>();
		for (int at = 1; at < reply.size(); at += figures) {
			admits.add(reply.get(at));
		}
		return admits;
	}

	@Test
	void concurrentDecisionsAreBatchedPerMasterAndAdmittedExactlyUpToTheLimit() {
		RedisClusterServer cluster = RedisServers.cluster();
		LettuceConnectionFactory factory = factory(cluster);
		try {
			RateLimiter limiter = new DefaultRateLimiter(
					connected(RedisRateLimitBackend.builder(factory).keyPrefix("cluster-batched:")));
			List<String> identities = names("batched-", 50);
			// one by one first: every master has the script (a concurrent first use may count a NOSCRIPT twice)
			identities.forEach((identity) -> limiter.check(RateLimitRequest.of(HOURLY, identity)));
			long callsBefore = scriptCalls(cluster.masters());
			Map<String, Integer> admitted = decide(limiter, identities, 79);
			long calls = scriptCalls(cluster.masters()) - callsBefore;
			assertThat(admitted).hasSize(50).allSatisfy((identity, count) -> assertThat(count).isEqualTo(39));
			if (redis7()) {
				assertThat(calls).as("script calls for 3,950 decisions").isLessThan(3950);
			}
			else {
				// a master's first batch fails to compile (EVALSHA's NOSCRIPT, then EVAL): its calls go one by one
				assertThat(calls).as("about one script call per decision on Redis 6.2").isBetween(3950L, 3950L + 40);
			}
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void withFunctionsBatchesAreFunctionCallsAndDecideExactly() {
		assumeRedis7();
		RedisClusterServer cluster = RedisServers.cluster();
		LettuceConnectionFactory factory = factory(cluster);
		try {
			RedisRateLimitBackend backend = connected(RedisRateLimitBackend.builder(factory)
				.keyPrefix("cluster-functions:")
				.scriptMode(RedisRateLimitBackend.ScriptMode.FUNCTIONS));
			long callsBefore = calls(cluster.masters(), "cmdstat_fcall:");
			long scriptsBefore = scriptCalls(cluster.masters());
			Map<String, Integer> admitted = decide(new DefaultRateLimiter(backend), names("functions-", 50), 80);
			long calls = calls(cluster.masters(), "cmdstat_fcall:") - callsBefore;
			assertThat(admitted).hasSize(50).allSatisfy((identity, count) -> assertThat(count).isEqualTo(40));
			assertThat(calls).as("function calls for 4,000 decisions: some batched").isLessThan(4000);
			assertThat(scriptCalls(cluster.masters())).as("no EVAL or EVALSHA").isEqualTo(scriptsBefore);
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void whileASlotMigratesBatchedDecisionsStayExact() {
		assumeRedis7();
		try (RedisClusterServer cluster = RedisClusterServer.start()) {
			LettuceConnectionFactory factory = factory(cluster);
			try {
				RateLimiter limiter = new DefaultRateLimiter(connected(RedisRateLimitBackend.builder(factory)));
				// identities on every master, eight of them in one slot, which migrates to the next master
				List<String> identities = names("id", 40);
				int slot = SlotHash.getSlot(KEYS.key(HOURLY, "id0"));
				for (int n = 0; identities.size() < 48; n++) {
					if (SlotHash.getSlot(KEYS.key(HOURLY, "m" + n)) == slot) {
						identities.add("m" + n);
					}
				}
				Map<String, Integer> before = decide(limiter, identities, 20);
				HostAndPort source = cluster.masterForSlot(slot);
				HostAndPort target = cluster.masters().get((cluster.masters().indexOf(source) + 1) % 3);
				Migration migration = new Migration(source, target, slot);
				try {
					migration.start();
					migration.move(identities.stream().filter((id) -> id.startsWith("m")).limit(4).toList());
					long askingBefore = calls(List.of(target), "cmdstat_asking:");
					Map<String, Integer> during = decide(limiter, identities, 15);
					assertThat(calls(List.of(target), "cmdstat_asking:")).as("calls redirected by ASK to the target")
						.isGreaterThan(askingBefore);
					migration.move(identities.stream().filter((id) -> id.startsWith("m") || id.equals("id0")).toList());
					migration.finish(cluster.masters());
					Map<String, Integer> after = decide(limiter, identities, 20);
					for (String identity : identities) {
						assertThat(before.get(identity) + during.getOrDefault(identity, 0)
								+ after.getOrDefault(identity, 0)).as(identity).isEqualTo(40);
					}
				}
				finally {
					migration.close();
				}
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aCallRedirectedToAFrozenNodeHoldsNothingOfItsFirstMastersOtherCalls() throws InterruptedException {
		assumeRedis7();
		try (RedisClusterServer cluster = RedisClusterServer.start()) {
			LettuceConnectionFactory factory = factory(cluster); // the client's command timeout: a minute
			try {
				RateLimiter limiter = DefaultRateLimiter.builder(connected(RedisRateLimitBackend.builder(factory)))
					.timeout(Duration.ofMillis(500))
					.build();
				HostAndPort source = cluster.masters().get(0);
				HostAndPort target = cluster.masters().get(1);
				List<String> healthy = identitiesOn(cluster, source, CLOSED_HOURLY, 20, "h");
				healthy.forEach((identity) -> limiter.check(RateLimitRequest.of(CLOSED_HOURLY, identity)));
				// an identity without a key in the slot of the first healthy one, which migrates to the target
				int slot = SlotHash.getSlot(KEYS.key(CLOSED_HOURLY, healthy.get(0)));
				String fresh = null;
				for (int n = 0; fresh == null; n++) {
					fresh = (SlotHash.getSlot(KEYS.key(CLOSED_HOURLY, "fresh" + n)) == slot) ? "fresh" + n : null;
				}
				try (Migration migration = new Migration(source, target, slot)) {
					migration.start();
					cluster.freeze(target);
					try {
						// the source answers ASK, and the call, sent again to the target, waits there a minute
						limiter.checkAsync(RateLimitRequest.of(CLOSED_HOURLY, fresh)).subscribe();
						Thread.sleep(100);
						int decided = 0;
						int failedClosed = 0;
						long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
						while (System.nanoTime() < end) {
							for (String identity : healthy) {
								decided++;
								failedClosed += limiter.check(RateLimitRequest.of(CLOSED_HOURLY, identity))
									.failedClosed() ? 1 : 0;
							}
						}
						assertThat(failedClosed).as("of %d decisions of the source's own keys, refused for want of an "
								+ "answer in the budget", decided).isZero();
					}
					finally {
						cluster.thaw(target);
					}
				}
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void batchesInFlightDuringAFailoverNeverAdmitMoreThanTheLimit() {
		withReplicatedCluster((cluster, backend) -> {
			RateLimiter limiter = new DefaultRateLimiter(backend);
			List<String> identities = names("id", 30);
			HostAndPort promoted = cluster.replicas().get(0);
			// decisions in flight while the replica takes over (CLUSTER FAILOVER: it catches up first, no write is
			// lost); a call that fails is refused (failure mode closed) and takes nothing
			CompletableFuture<Map<String, Integer>> during = CompletableFuture
				.supplyAsync(() -> decide(limiter, identities, 30, CLOSED_HOURLY));
			try (StatefulRedisConnection<String, String> connection = connect(promoted)) {
				connection.sync().clusterFailover(false);
				Wait.until(WAIT, () -> connection.sync().info("replication").contains("role:master"));
			}
			Wait.until(WAIT, () -> backend.shards().contains(promoted.toString()));
			Map<String, Integer> first = during.join();
			Map<String, Integer> after = decide(limiter, identities, 45, CLOSED_HOURLY);
			for (String identity : identities) {
				int admitted = first.getOrDefault(identity, 0) + after.getOrDefault(identity, 0);
				assertThat(admitted).as(identity).isLessThanOrEqualTo(40);
			}
			assertThat(identities.stream().mapToInt((id) -> first.getOrDefault(id, 0) + after.getOrDefault(id, 0))
				.sum()).as("admissions of 30 identities of 40").isEqualTo(30 * 40);
		});
	}

	@Test
	void afterAFailoverBatchedDecisionsStayExact() {
		withReplicatedCluster((cluster, backend) -> {
			RateLimiter limiter = new DefaultRateLimiter(backend);
			List<String> identities = names("id", 30);
			Map<String, Integer> before = decide(limiter, identities, 25);
			HostAndPort victim = cluster.masters().get(0);
			try (StatefulRedisConnection<String, String> connection = connect(victim)) {
				// every decision so far reached the replica (WAIT counts the replication stream's offset)
				connection.sync().set("replicated", "yes");
				assertThat(connection.sync().waitForReplication(1, 10_000)).isEqualTo(1);
			}
			cluster.killMaster(victim);
			List<HostAndPort> masters = cluster.awaitFailover(WAIT);
			Wait.until(WAIT, () -> backend.shards().equals(addresses(masters)));
			Map<String, Integer> after = decide(limiter, identities, 30);
			for (String identity : identities) {
				assertThat(before.get(identity) + after.getOrDefault(identity, 0)).as(identity).isEqualTo(40);
			}
		});
	}

	/** Runs the test against a backend connected to a new Cluster of three masters with a replica each (Redis 7). */
	private static void withReplicatedCluster(BiConsumer<RedisClusterServer, RedisRateLimitBackend> test) {
		assumeRedis7();
		try (RedisClusterServer cluster = RedisClusterServer.start(3, 1)) {
			LettuceConnectionFactory factory = factory(cluster);
			try {
				test.accept(cluster, connected(RedisRateLimitBackend.builder(factory)));
			}
			finally {
				factory.destroy();
			}
		}
	}

	/** Each identity's admissions when every identity asks {@code each} times, 64 in flight. */
	private static Map<String, Integer> decide(RateLimiter limiter, List<String> identities, int each) {
		return decide(limiter, identities, each, HOURLY);
	}

	/** Each identity's admissions of the policy when every identity asks {@code each} times, 64 in flight. */
	private static Map<String, Integer> decide(RateLimiter limiter, List<String> identities, int each,
			RateLimitPolicy policy) {
		List<RateLimitDecision> decisions = Flux.range(0, identities.size() * each)
			.flatMap((i) -> limiter.checkAsync(RateLimitRequest.of(policy, identities.get(i % identities.size()))),
					64)
			.collectList()
			.block(WAIT);
		Map<String, Integer> admitted = new ConcurrentHashMap<>();
		decisions.stream()
			.filter(RateLimitDecision::allowed)
			.forEach((d) -> admitted.merge(d.decisions().get(0).identity(), 1, Integer::sum));
		return admitted;
	}

	private static List<String> names(String prefix, int count) {
		List<String> names = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			names.add(prefix + i);
		}
		return names;
	}

	private static RedisRateLimitBackend connected(RedisRateLimitBackend.Builder builder) {
		RedisRateLimitBackend backend = builder.build();
		backend.connect();
		return backend;
	}

	/** A cluster batch sent to one node, as the backend sends it (the first key declared, the others after the costs). */
	private static List<Long> clusterBatch(RedisCommands<String, String> node, LuaScripts.PolicyScripts own,
			String prefix, List<String> keys, List<String> costs, String time) {
		List<String> args = new ArrayList<>(List.of(time));
		args.addAll(costs);
		keys.subList(1, keys.size()).forEach((key) -> args.add(prefix + key));
		return ScriptReply.toLongs(node.eval(own.clusterBatch().getScriptAsString(), ScriptOutputType.MULTI,
				new String[] { prefix + keys.get(0) }, args.toArray(String[]::new)));
	}

	/** Identities whose keys of the policy are in distinct slots of the master. */
	private static List<String> identitiesOn(RedisClusterServer cluster, HostAndPort master, RateLimitPolicy policy,
			int count, String prefix) {
		Map<Integer, String> bySlot = new LinkedHashMap<>();
		Predicate<String> onMaster = (identity) -> cluster.masterForKey(KEYS.key(policy, identity)).equals(master);
		for (int n = 0; bySlot.size() < count; n++) {
			String identity = prefix + n;
			if (onMaster.test(identity)) {
				bySlot.putIfAbsent(SlotHash.getSlot(KEYS.key(policy, identity)), identity);
			}
		}
		return new ArrayList<>(bySlot.values());
	}

	private static Set<String> addresses(List<HostAndPort> masters) {
		return masters.stream().map(HostAndPort::toString).collect(Collectors.toSet());
	}

	private static StatefulRedisConnection<String, String> connect(HostAndPort node) {
		return client.connect(RedisURI.create(node.host(), node.port()));
	}

	/** EVALSHA and EVAL calls so far, summed over the masters. */
	private static long scriptCalls(List<HostAndPort> masters) {
		return calls(masters, "cmdstat_evalsha:", "cmdstat_eval:");
	}

	/** Calls of the commands so far ({@code INFO commandstats}), summed over the nodes. */
	private static long calls(List<HostAndPort> nodes, String... commands) {
		long calls = 0;
		for (HostAndPort node : nodes) {
			try (StatefulRedisConnection<String, String> connection = connect(node)) {
				String stats = connection.sync().info("commandstats");
				for (String name : commands) {
					int at = stats.indexOf(name);
					if (at >= 0) {
						int start = stats.indexOf("calls=", at) + 6;
						calls += Long.parseLong(stats.substring(start, stats.indexOf(',', start)));
					}
				}
			}
		}
		return calls;
	}

	/** A cluster factory that follows topology changes (as the starter's is configured to in production). */
	private static LettuceConnectionFactory factory(RedisClusterServer cluster) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster.masters().stream().map(HostAndPort::toString).toList()),
				LettuceClientConfiguration.builder()
					.clientOptions(ClusterClientOptions.builder()
						.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
							.enableAllAdaptiveRefreshTriggers()
							.enablePeriodicRefresh(Duration.ofMillis(500))
							.build())
						.build())
					.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/** A slot moving from one master to another, its keys moved a few at a time with MIGRATE. */
	private static final class Migration implements AutoCloseable {

		private final StatefulRedisConnection<String, String> source;

		private final StatefulRedisConnection<String, String> target;

		private final HostAndPort targetAddress;

		private final int slot;

		Migration(HostAndPort source, HostAndPort target, int slot) {
			this.source = connect(source);
			this.target = connect(target);
			this.targetAddress = target;
			this.slot = slot;
		}

		void start() {
			this.target.sync().clusterSetSlotImporting(this.slot, this.source.sync().clusterMyId());
			this.source.sync().clusterSetSlotMigrating(this.slot, this.target.sync().clusterMyId());
		}

		void move(List<String> identities) {
			List<String> here = this.source.sync().clusterGetKeysInSlot(this.slot, 1000);
			String[] keys = identities.stream()
				.map((identity) -> KEYS.key(HOURLY, identity))
				.filter(here::contains)
				.toArray(String[]::new);
			if (keys.length > 0) {
				this.source.sync()
					.migrate(this.targetAddress.host(), this.targetAddress.port(), 0, 10_000, MigrateArgs.Builder.keys(keys));
			}
		}

		/** The slot is the target's, on every master. */
		void finish(List<HostAndPort> masters) {
			String targetId = this.target.sync().clusterMyId();
			this.target.sync().clusterSetSlotNode(this.slot, targetId);
			this.source.sync().clusterSetSlotNode(this.slot, targetId);
			for (HostAndPort master : masters) {
				try (StatefulRedisConnection<String, String> connection = connect(master)) {
					connection.sync().clusterSetSlotNode(this.slot, targetId);
				}
			}
		}

		@Override
		public void close() {
			this.source.close();
			this.target.close();
		}

	}

}
