package io.github.ratelimit.testkit;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.jspecify.annotations.Nullable;

/**
 * Lettuce clients for the harness' own admin connections. They share one set of client resources
 * (event loops, timers) so that each node costs a connection, not a thread pool.
 */
final class Lettuce {

	static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

	private static volatile @Nullable ClientResources resources;

	private Lettuce() {
	}

	static RedisClient client(HostAndPort address) {
		return RedisClient.create(resources(), uri(address));
	}

	static RedisClient sentinelClient(HostAndPort sentinel, String masterName) {
		RedisURI uri = RedisURI.Builder.sentinel(sentinel.host(), sentinel.port(), masterName)
			.withTimeout(COMMAND_TIMEOUT)
			.build();
		return RedisClient.create(resources(), uri);
	}

	static RedisURI uri(HostAndPort address) {
		return RedisURI.Builder.redis(address.host(), address.port()).withTimeout(COMMAND_TIMEOUT).build();
	}

	/** Shuts a client down without touching the shared resources. */
	static void shutdown(RedisClient client) {
		client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
	}

	private static ClientResources resources() {
		ClientResources result = resources;
		if (result == null) {
			synchronized (Lettuce.class) {
				result = resources;
				if (result == null) {
					result = DefaultClientResources.create();
					resources = result;
				}
			}
		}
		return result;
	}

}
