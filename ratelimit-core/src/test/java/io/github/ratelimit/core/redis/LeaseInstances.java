package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Instances of the leasing backend on one real Redis, each with a connection of its own, as separate JVMs have. */
final class LeaseInstances implements AutoCloseable {

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<LeasingBackend> backends = new ArrayList<>();

	private final Supplier<RedisConfiguration> configuration;

	LeaseInstances(RedisServer server) {
		this(server.host(), server.port());
	}

	LeaseInstances(String host, int port) {
		this.configuration = () -> new RedisStandaloneConfiguration(host, port);
	}

	LeaseInstances(RedisClusterServer cluster) {
		this.configuration = () -> new RedisClusterConfiguration(
				cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList());
	}

	private LettuceConnectionFactory connect() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(this.configuration.get());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return factory;
	}

	private @Nullable StringRedisTemplate template;

	/** A client of the Redis, for calls made directly (one connection, made on first use). */
	synchronized StringRedisTemplate template() {
		if (this.template == null) {
			this.template = new StringRedisTemplate(connect());
		}
		return this.template;
	}

	LeasingBackend start(Map<String, LeaseSettings> leases) {
		LettuceConnectionFactory factory = connect();
		LeasingBackend backend = new LeasingBackend(RedisRateLimitBackend.builder(factory).build(), leases);
		backend.start();
		this.backends.add(backend);
		return backend;
	}

	/** Redis' clock, in microseconds. */
	long redisMicros() {
		Long time = template().execute((RedisCallback<Long>) (connection) -> connection.serverCommands()
			.time(TimeUnit.MICROSECONDS));
		if (time == null) {
			throw new IllegalStateException("No TIME from Redis");
		}
		return time;
	}

	/** Waits until Redis' clock has passed the time (a wait for a condition, nothing asserted about it). */
	void awaitRedisTime(long micros) {
		while (redisMicros() <= micros) {
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/** Waits out a window aligned to the epoch if it ends within a minute, so that a test runs in one window. */
	void awayFromWindowEnd(Duration window) {
		long length = window.toNanos() / 1000;
		long now = redisMicros();
		if (length - now % length < Duration.ofMinutes(1).toNanos() / 1000) {
			awaitRedisTime(now - now % length + length);
		}
	}

	/** One request of cost 1, waited for: whether it was admitted. */
	static boolean admits(LeasingBackend backend, RateLimitPolicy policy, String identity) {
		Acquisition acquisition = backend.acquire(RateLimitRequest.of(policy, identity), UUID.randomUUID().toString())
			.block();
		return acquisition != null && acquisition.decisions().get(0).allowed();
	}

	/** Requests until one is denied: how many were admitted. */
	static int drain(LeasingBackend backend, RateLimitPolicy policy, String identity) {
		int admitted = 0;
		while (admits(backend, policy, identity)) {
			admitted++;
		}
		return admitted;
	}

	@Override
	public void close() {
		this.backends.forEach(LeasingBackend::close);
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

}
