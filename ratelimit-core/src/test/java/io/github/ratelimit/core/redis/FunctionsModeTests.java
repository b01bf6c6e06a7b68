package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.RedisVersion;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The functions script mode ({@code FUNCTION LOAD} and {@code FCALL}) on real servers: a promoted replica has the
 * functions already (no load, no failed call), where EVALSHA pays a NOSCRIPT round trip; a server that lost them
 * ({@code FUNCTION FLUSH}, a restart without persistence) gets them loaded again; a Cluster gets each library on
 * every master; a Redis older than 7 is refused with a message naming the property. Calls are counted with
 * {@code INFO commandstats} on the server.
 */
class FunctionsModeTests {

	private static final RateLimitPolicy BUCKET = RateLimitPolicy.builder("fn-tb")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(100)
		.window(Duration.ofSeconds(1))
		.build();

	private static final RateLimitPolicy WINDOW = RateLimitPolicy.builder("fn-fw")
		.algorithm(Algorithm.FIXED_WINDOW)
		.limit(100)
		.window(Duration.ofSeconds(1))
		.build();

	@Test
	void aPromotedReplicaHasTheFunctionsAndNeedsNoLoad() {
		Map<String, CommandStats> stats = afterPromotion(ScriptMode.FUNCTIONS);
		assertThat(stats.get("fcall").calls()).isGreaterThanOrEqualTo(3);
		assertThat(stats.get("fcall").failed()).as("no call found its function missing").isZero();
		assertThat(stats).doesNotContainKeys("function|load", "eval", "evalsha");
	}

	@Test
	void aPromotedReplicaLacksTheScriptsOfEvalsha() {
		// the contrast: scripts loaded by EVAL are not replicated, so each script's first call is a NOSCRIPT round trip
		Map<String, CommandStats> stats = afterPromotion(ScriptMode.EVALSHA);
		assertThat(stats.get("evalsha").failed()).isGreaterThanOrEqualTo(2);
		assertThat(stats.get("eval").calls()).isEqualTo(stats.get("evalsha").failed());
	}

	/**
	 * Runs three calls (a single-entry acquire, a two-policy acquire on the driver, a release) on a master, promotes
	 * its replica ({@code REPLICAOF NO ONE}, as a failover does) and runs them again on it, from another client.
	 * @return the promoted replica's command statistics of the second round
	 */
	private static Map<String, CommandStats> afterPromotion(ScriptMode mode) {
		assumeThat(hasFunctions(RedisServers.standalone())).as("Redis functions need Redis 7 or later").isTrue();
		try (RedisServer master = RedisServer.start(); RedisServer replica = RedisServer.start()) {
			replica.commands().replicaof(master.host(), master.port());
			awaitTrue("the replica in sync",
					() -> replica.commands().info("replication").contains("master_link_status:up"));
			withBackend(master.host(), master.port(), mode, (backend) -> {
				threeCalls(backend, "before");
				return null;
			});
			if (mode == ScriptMode.FUNCTIONS) {
				awaitTrue("the functions replicated", () -> replica.commands().functionList().size() == master.commands()
					.functionList()
					.size());
			}
			awaitTrue("the replica caught up", () -> offset(replica) >= offset(master));
			replica.commands().replicaofNoOne();
			replica.commands().configResetstat();
			withBackend(replica.host(), replica.port(), mode, (backend) -> {
				threeCalls(backend, "after");
				return null;
			});
			return commandStats(replica.commands());
		}
	}

	@Test
	void concurrentAcquiresBatchedAsFunctionsAreAdmittedExactlyUpToTheLimit() throws Exception {
		assumeThat(hasFunctions(RedisServers.standalone())).as("Redis functions need Redis 7 or later").isTrue();
		RateLimitPolicy limited = RateLimitPolicy.builder("fn-concurrent")
			// a sliding window log: a fixed window's boundary (each whole hour) during the run would refill it
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(300)
			.window(Duration.ofHours(1))
			.build();
		try (RedisServer server = RedisServer.start()) {
			withBackend(server.host(), server.port(), ScriptMode.FUNCTIONS, (backend) -> {
				acquire(backend, BUCKET, "warm", "w"); // opens the connection: later acquires batch
				server.commands().configResetstat();
				LongAdder admitted = new LongAdder();
				ExecutorService pool = Executors.newFixedThreadPool(32);
				try {
					List<Future<?>> done = new ArrayList<>();
					for (int t = 0; t < 32; t++) {
						int thread = t;
						done.add(pool.submit(() -> {
							for (int i = 0; i < 25; i++) {
								if (acquire(backend, limited, "shared", thread + "-" + i).allowed()) {
									admitted.increment();
								}
							}
						}));
					}
					for (Future<?> future : done) {
						future.get();
					}
				}
				catch (Exception ex) {
					throw new AssertionError(ex);
				}
				finally {
					pool.shutdown();
				}
				assertThat(admitted.sum()).isEqualTo(300);
				Map<String, CommandStats> stats = commandStats(server.commands());
				assertThat(stats).doesNotContainKeys("eval", "evalsha");
				assertThat(stats.get("fcall").calls()).as("800 decisions, some in batches").isBetween(1L, 800L);
				return null;
			});
		}
	}

	@Test
	void functionsLostByAFlushOrARestartAreLoadedAgain() {
		assumeThat(hasFunctions(RedisServers.standalone())).as("Redis functions need Redis 7 or later").isTrue();
		try (RedisServer server = RedisServer.start()) {
			withBackend(server.host(), server.port(), ScriptMode.FUNCTIONS, (backend) -> {
				assertThat(acquire(backend, BUCKET, "id", "r1").allowed()).isTrue();
				assertThat(commandStats(server.commands()).get("function|load").calls()).isEqualTo(1);

				server.commands().functionFlush(io.lettuce.core.FlushMode.SYNC);
				server.commands().configResetstat();
				assertThat(acquire(backend, BUCKET, "id", "r2").allowed()).isTrue();
				Map<String, CommandStats> flushed = commandStats(server.commands());
				assertThat(flushed.get("fcall").failed()).as("the call that found no function").isEqualTo(1);
				assertThat(flushed.get("function|load").calls()).isEqualTo(1);

				server.restart();
				awaitTrue("a call after the restart", () -> {
					try {
						return acquire(backend, BUCKET, "id", "r3").allowed();
					}
					catch (RuntimeException ex) {
						return false; // the client reconnects
					}
				});
				assertThat(commandStats(server.commands()).get("function|load").calls()).isEqualTo(1);
				return null;
			});
		}
	}

	@Test
	void onAClusterEachLibraryIsLoadedOnEveryMaster() {
		assumeThat(hasFunctions(RedisServers.standalone())).as("Redis functions need Redis 7 or later").isTrue();
		RedisClusterServer cluster = RedisServers.cluster();
		for (HostAndPort master : cluster.masters()) {
			onNode(master, (commands) -> commands.functionFlush(io.lettuce.core.FlushMode.SYNC));
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(
				cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory).scriptMode(ScriptMode.FUNCTIONS).build();
			assertThat(acquire(backend, BUCKET, "one identity", "r1").allowed()).isTrue();
			String library = LuaScripts.functionName(new LuaScripts().forSingleEntry(BUCKET).single());
			for (HostAndPort master : cluster.masters()) {
				List<Map<String, Object>> libraries = onNode(master, (commands) -> commands.functionList(library));
				assertThat(libraries).as("libraries on " + master).hasSize(1);
			}
			// and a call in another slot, on another master, finds it there
			for (int i = 0; i < 20; i++) {
				assertThat(acquire(backend, BUCKET, "identity " + i, "r" + i).allowed()).isTrue();
			}
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void aRedisWithoutFunctionsIsRefusedWithAMessageNamingTheProperty() {
		RedisServer server = RedisServers.standalone();
		assumeThat(hasFunctions(server)).as("this Redis has functions (the check runs on Redis 6.2)").isFalse();
		withBackend(server.host(), server.port(), ScriptMode.FUNCTIONS, (backend) -> {
			assertThatExceptionOfType(InvalidDataAccessApiUsageException.class)
				.isThrownBy(() -> acquire(backend, BUCKET, "id", "r1"))
				.withMessageContaining("ratelimit.redis.script-mode")
				.withMessageContaining("Redis 7");
			return null;
		});
	}

	private static void threeCalls(RedisRateLimitBackend backend, String round) {
		assertThat(acquire(backend, BUCKET, "id", round + "-1").allowed()).isTrue();
		RateLimitRequest both = RateLimitRequest.builder().add(BUCKET, "id", 1).add(WINDOW, "id", 1).build();
		Acquisition acquired = backend.acquire(both, round + "-2").block();
		assertThat(acquired.decisions()).allMatch(PolicyDecision::allowed);
		backend.release(both.entries(), round + "-2", acquired.entryTimesMicros(), acquired.entrySequences()).block();
	}

	private static PolicyDecision acquire(RedisRateLimitBackend backend, RateLimitPolicy policy, String identity,
			String requestId) {
		return backend.acquire(RateLimitRequest.builder().add(policy, identity, 1).build(), requestId).block()
			.decisions()
			.get(0);
	}

	private static <T> T withBackend(String host, int port, ScriptMode mode,
			Function<RedisRateLimitBackend, T> test) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory).scriptMode(mode).build();
			return test.apply(backend);
		}
		finally {
			factory.destroy();
		}
	}

	private static <T> T onNode(HostAndPort node, Function<RedisCommands<String, String>, T> action) {
		RedisClient client = RedisClient.create(RedisURI.create(node.host(), node.port()));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection.sync());
		}
		finally {
			client.shutdown();
		}
	}

	private static boolean hasFunctions(RedisServer server) {
		RedisVersion version = RedisVersion.parse(server.commands().info("server").replace("redis_version:", "v="));
		return version != null && version.isAtLeast(7, 0);
	}

	private static long offset(RedisServer server) {
		String info = server.commands().info("replication");
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("master_repl_offset:")) {
				return Long.parseLong(line.substring("master_repl_offset:".length()).trim());
			}
		}
		return -1;
	}

	private static void awaitTrue(String what, java.util.function.BooleanSupplier condition) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("Timed out waiting for " + what);
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
	}

	/** A command's calls and failed calls, from {@code INFO commandstats} (Redis 7: {@code failed_calls}). */
	private record CommandStats(long calls, long failed) {
	}

	private static Map<String, CommandStats> commandStats(RedisCommands<String, String> commands) {
		Map<String, CommandStats> stats = new HashMap<>();
		for (String line : commands.info("commandstats").split("\r?\n")) {
			if (!line.startsWith("cmdstat_")) {
				continue;
			}
			String name = line.substring("cmdstat_".length(), line.indexOf(':'));
			Map<String, Long> figures = new HashMap<>();
			for (String figure : line.substring(line.indexOf(':') + 1).split(",")) {
				String[] pair = figure.split("=");
				if (pair[0].endsWith("calls")) {
					figures.put(pair[0], Long.parseLong(pair[1]));
				}
			}
			stats.put(name, new CommandStats(figures.getOrDefault("calls", 0L),
					figures.getOrDefault("failed_calls", 0L) + figures.getOrDefault("rejected_calls", 0L)));
		}
		return stats;
	}

}
