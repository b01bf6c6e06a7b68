package io.github.ratelimit.core;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.RedisVersion;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The backends every engine test runs on: the local one, and the Redis one on a real standalone server and on a real
 * three-master Cluster (started by the testkit on free loopback ports, once per JVM).
 */
enum Backends {

	LOCAL, REDIS, REDIS_CLUSTER;

	private static final Map<Backends, Fixture> FIXTURES = new EnumMap<>(Backends.class);

	/** Fixtures whose backend runs its scripts as Redis functions (Redis 7+). */
	private static final Map<Backends, Fixture> FUNCTIONS_FIXTURES = new EnumMap<>(Backends.class);

	/** The Redis kinds only. */
	static List<Backends> redis() {
		return List.of(REDIS, REDIS_CLUSTER);
	}

	/**
	 * The shared fixture of this kind, emptied.
	 * @return the fixture
	 */
	synchronized Fixture fresh() {
		if (this == LOCAL) {
			return create(LOCAL);
		}
		Fixture fixture = FIXTURES.computeIfAbsent(this, Backends::create);
		fixture.flush();
		return fixture;
	}

	/**
	 * The shared fixture of this kind whose backend runs its scripts as Redis functions, emptied; the test is
	 * skipped (an assumption) on the local backend and on a Redis older than 7, which has no functions.
	 * @return the fixture
	 */
	synchronized Fixture freshInFunctionsMode() {
		Assumptions.assumeTrue(this != LOCAL, "the local backend runs no scripts");
		Assumptions.assumeTrue(redisHasFunctions(), "Redis functions need Redis 7 or later");
		Fixture fixture = FUNCTIONS_FIXTURES.computeIfAbsent(this, (kind) -> {
			LettuceConnectionFactory factory = kind.newConnectionFactory();
			RedisRateLimitBackend backend = RedisRateLimitBackend.builder(factory)
				.scriptMode(RedisRateLimitBackend.ScriptMode.FUNCTIONS)
				.build();
			return new Fixture(kind, backend, new StringRedisTemplate(factory), factory);
		});
		fixture.flush();
		return fixture;
	}

	/**
	 * Whether the testkit's Redis has functions (7 or later; the first CI leg runs 6.2).
	 * @return true on Redis 7+
	 */
	static boolean redisHasFunctions() {
		String info = RedisServers.standalone().commands().info("server");
		RedisVersion version = RedisVersion.parse(info.replace("redis_version:", "v="));
		return version != null && version.isAtLeast(7, 0);
	}

	/**
	 * A new connection factory to the same Redis (another "client"); the caller stops it.
	 * @return a started factory
	 */
	LettuceConnectionFactory newConnectionFactory() {
		LettuceConnectionFactory factory = switch (this) {
			case REDIS -> {
				RedisServer server = RedisServers.standalone();
				yield new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
			}
			case REDIS_CLUSTER -> {
				RedisClusterServer cluster = RedisServers.cluster();
				yield new LettuceConnectionFactory(new RedisClusterConfiguration(
						cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList()));
			}
			case LOCAL -> throw new IllegalStateException("The local backend has no connection");
		};
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static Fixture create(Backends kind) {
		if (kind == LOCAL) {
			return new Fixture(kind, new LocalRateLimitBackend(), null, null);
		}
		LettuceConnectionFactory factory = kind.newConnectionFactory();
		StringRedisTemplate redis = new StringRedisTemplate(factory);
		return new Fixture(kind, new RedisRateLimitBackend(factory), redis, factory);
	}

	/** A backend with what tests need to look at its storage. */
	static final class Fixture {

		final Backends kind;

		final RateLimitBackend backend;

		final RateLimiter limiter;

		private final @Nullable StringRedisTemplate redis;

		private final @Nullable LettuceConnectionFactory factory;

		private Fixture(Backends kind, RateLimitBackend backend, @Nullable StringRedisTemplate redis,
				@Nullable LettuceConnectionFactory factory) {
			this.kind = kind;
			this.backend = backend;
			this.limiter = new DefaultRateLimiter(backend);
			this.redis = redis;
			this.factory = factory;
		}

		StringRedisTemplate redis() {
			if (this.redis == null) {
				throw new IllegalStateException(this.kind + " has no Redis");
			}
			return this.redis;
		}

		LettuceConnectionFactory factory() {
			if (this.factory == null) {
				throw new IllegalStateException(this.kind + " has no Redis");
			}
			return this.factory;
		}

		void flush() {
			switch (this.kind) {
				case REDIS -> RedisServers.standalone().flushAll();
				case REDIS_CLUSTER -> RedisServers.cluster().flushAll();
				case LOCAL -> {
					// fresh() makes a new local backend every time
				}
			}
		}

		/** Every key in Redis (on Cluster, on every master). */
		Set<String> keys() {
			Set<String> keys = redis().keys("*");
			return (keys != null) ? new TreeSet<>(keys) : Set.of();
		}

		/** Milliseconds to live of each key; -1 means no TTL, -2 gone. */
		Map<String, Long> ttls() {
			return keys().stream()
				.collect(Collectors.toMap((key) -> key, (key) -> redis().getExpire(key, TimeUnit.MILLISECONDS)));
		}

	}

	/** Explicit times for the conformance tests: a start aligned on the hour, so windows start with it. */
	static final class Clock {

		static final long T0 = 472_222L * 3_600_000_000L;

		private final AtomicLong now = new AtomicLong(T0);

		long now() {
			return this.now.get();
		}

		long advanceMillis(long millis) {
			return this.now.addAndGet(millis * 1_000L);
		}

		long advanceMicros(long micros) {
			return this.now.addAndGet(micros);
		}

		long setMillis(long millisAfterT0) {
			this.now.set(T0 + millisAfterT0 * 1_000L);
			return this.now.get();
		}

	}

}
