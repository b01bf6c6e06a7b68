package io.github.ratelimit.testkit;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * Lettuce clients that the tests create independently of the harness' own connections, sharing
 * one set of client resources to keep the suite fast.
 */
final class TestClients {

	private static final ClientResources RESOURCES = DefaultClientResources.create();

	private TestClients() {
	}

	static RedisClient standalone(String uri) {
		return standalone(RedisURI.create(uri));
	}

	static RedisClient standalone(RedisURI uri) {
		return RedisClient.create(RESOURCES, uri);
	}

	static RedisClient standalone(HostAndPort address) {
		return standalone(address.uri());
	}

	/**
	 * A client whose commands time out after the given time, for probing servers that hang.
	 * @param address where to connect
	 * @param timeout the command timeout, also used as connect timeout
	 * @return the client
	 */
	static RedisClient withTimeout(HostAndPort address, Duration timeout) {
		RedisClient client = standalone(RedisURI.Builder.redis(address.host(), address.port()).withTimeout(timeout).build());
		client.setOptions(ClientOptions.builder()
			.socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
			.build());
		return client;
	}

	static RedisClusterClient cluster(List<String> seedUris) {
		return RedisClusterClient.create(RESOURCES, seedUris.stream().map(RedisURI::create).toList());
	}

	static void shutdown(RedisClient client) {
		client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
	}

	static void shutdown(RedisClusterClient client) {
		client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
	}

}
