package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Instances of the leasing backend on one real Redis, each with a connection of its own, as separate JVMs have. */
final class LeaseInstances implements AutoCloseable {

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

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

	LeasingBackend start(Map<String, LeaseSettings> leases) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(this.configuration.get());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return new LeasingBackend(RedisRateLimitBackend.builder(factory).build(), leases);
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
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

}
