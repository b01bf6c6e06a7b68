package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.context.support.GenericApplicationContext;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend follows its connection factory's lifecycle: when the factory is stopped and started again (a
 * context stopped and started, paused and resumed, a checkpoint and restore), the very next call on either path
 * works, without waiting for a failure to notice; when the backend is stopped, its connection is closed.
 */
class ConnectionLifecycleTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("lifecycle")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(1_000)
		.window(Duration.ofSeconds(1))
		.build();

	@ParameterizedTest
	@MethodSource("io.github.ratelimit.core.Backends#redis")
	void theNextCallsAfterTheFactoryIsStoppedAndStartedAgainAreAnswered(Backends kind) {
		LettuceConnectionFactory factory = kind.newConnectionFactory();
		try {
			RateLimiter limiter = new DefaultRateLimiter(new RedisRateLimitBackend(factory));
			assertAnswered(limiter, "before");
			for (int round = 0; round < 2; round++) {
				factory.stop();
				factory.start();
				// the first call after the restart, on each path, is answered by Redis
				assertAnswered(limiter, "after-" + round);
			}
		}
		finally {
			factory.destroy();
		}
	}

	@ParameterizedTest
	@MethodSource("io.github.ratelimit.core.Backends#redis")
	void aContextStoppedAndStartedAgainStopsTheBackendBeforeTheFactoryAndStartsItAfter(Backends kind) {
		try (GenericApplicationContext context = new GenericApplicationContext()) {
			context.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, kind::newConnectionFactory);
			context.registerBean(RedisRateLimitBackend.class,
					() -> new RedisRateLimitBackend(context.getBean(LettuceConnectionFactory.class)));
			context.refresh();
			RedisRateLimitBackend backend = context.getBean(RedisRateLimitBackend.class);
			LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
			RateLimiter limiter = new DefaultRateLimiter(backend);
			assertThat(backend.isRunning()).isTrue();
			assertAnswered(limiter, "before");
			context.stop();
			assertThat(backend.isRunning()).isFalse();
			assertThat(factory.isRunning()).isFalse();
			context.start();
			assertThat(backend.isRunning()).isTrue();
			assertAnswered(limiter, "after-stop");
			context.pause();
			context.start();
			assertAnswered(limiter, "after-pause");
		}
	}

	@Test
	void stoppingTheBackendClosesItsConnectionAndStartingItOpensANewOne() {
		RedisServer server = RedisServers.standalone();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		// a connection of its own per caller, so that the backend's is one the server can count
		factory.setShareNativeConnection(false);
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
			backend.start();
			RateLimiter limiter = new DefaultRateLimiter(backend);
			long before = clients(server);
			assertAnswered(limiter, "open");
			long open = clients(server);
			assertThat(open).isGreaterThan(before);
			backend.stop();
			assertThat(backend.isRunning()).isFalse();
			Wait.until(Duration.ofSeconds(5), () -> clients(server) < open);
			backend.start();
			assertAnswered(limiter, "again");
		}
		finally {
			factory.destroy();
		}
	}

	@ParameterizedTest
	@MethodSource("io.github.ratelimit.core.Backends#redis")
	void aFactoryOtherThanLettuceIsAskedWhetherItIsAClusterOnFirstUseNotWhenTheBackendIsMade(Backends kind) {
		LettuceConnectionFactory lettuce = kind.newConnectionFactory();
		try {
			CountingFactory factory = new CountingFactory(lettuce);
			RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
			assertThat(factory.clusterConnections).as("opened by the constructor").hasValue(0);
			RateLimitDecision first = new DefaultRateLimiter(backend)
				.checkAsync(RateLimitRequest.of(POLICY, "first"))
				.block(Duration.ofSeconds(10));
			assertThat(first).isNotNull();
			assertThat(first.allowed()).isTrue();
			assertThat(factory.askedOn).as("asked off the caller's thread").isNotEqualTo(Thread.currentThread());
			assertThat(backend.isCluster()).isEqualTo(kind == Backends.REDIS_CLUSTER);
			assertAnswered(new DefaultRateLimiter(backend), "second");
			assertThat(factory.clusterConnections).as("asked once").hasValue(1);
		}
		finally {
			lettuce.destroy();
		}
	}

	/** A connection factory that is not Lettuce's (and has no non-blocking form), counting cluster connections. */
	private static final class CountingFactory implements RedisConnectionFactory {

		private final LettuceConnectionFactory delegate;

		private final AtomicInteger clusterConnections = new AtomicInteger();

		private volatile @Nullable Thread askedOn;

		CountingFactory(LettuceConnectionFactory delegate) {
			this.delegate = delegate;
		}

		@Override
		public boolean getConvertPipelineAndTxResults() {
			return this.delegate.getConvertPipelineAndTxResults();
		}

		@Override
		public RedisConnection getConnection() {
			return this.delegate.getConnection();
		}

		@Override
		public RedisClusterConnection getClusterConnection() {
			this.clusterConnections.incrementAndGet();
			this.askedOn = Thread.currentThread();
			return this.delegate.getClusterConnection();
		}

		@Override
		public RedisSentinelConnection getSentinelConnection() {
			return this.delegate.getSentinelConnection();
		}

		@Override
		public @Nullable DataAccessException translateExceptionIfPossible(RuntimeException ex) {
			return this.delegate.translateExceptionIfPossible(ex);
		}

	}

	private static long clients(RedisServer server) {
		// the probe's own connection is one of them, the same one every time
		return Arrays.stream(server.commands().clientList().split("\n")).filter((line) -> line.contains("cmd=")).count();
	}

	private static void assertAnswered(RateLimiter limiter, String identity) {
		RateLimitRequest request = RateLimitRequest.of(POLICY, identity);
		RateLimitDecision blocking = limiter.check(request);
		RateLimitDecision reactive = limiter.checkAsync(request).block(Duration.ofSeconds(10));
		assertThat(blocking.allowed()).as("blocking").isTrue();
		assertThat(reactive).isNotNull();
		assertThat(reactive.allowed()).as("non-blocking").isTrue();
	}

}
