package io.github.ratelimit.test;

import java.util.List;

import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * Spring Boot's Redis {@code ConnectionDetails} of a testkit server: a bean of this type replaces
 * {@code spring.data.redis.*} (host, port, cluster nodes) with the server's loopback address.
 */
record EmbeddedRedisConnectionDetails(@Nullable Standalone standalone,
		@Nullable Cluster cluster) implements DataRedisConnectionDetails {

	static EmbeddedRedisConnectionDetails of(RedisServer server) {
		return new EmbeddedRedisConnectionDetails(Standalone.of(server.host(), server.port()), null);
	}

	/** Every master is a seed node. */
	static EmbeddedRedisConnectionDetails of(RedisClusterServer cluster) {
		List<Node> nodes = cluster.masters().stream().map((HostAndPort master) -> new Node(master.host(), master.port()))
			.toList();
		return new EmbeddedRedisConnectionDetails(null, () -> nodes);
	}

	@Override
	public @Nullable Standalone getStandalone() {
		return this.standalone;
	}

	@Override
	public @Nullable Cluster getCluster() {
		return this.cluster;
	}

	@Override
	public String toString() {
		return (this.standalone != null) ? "redis://" + this.standalone.getHost() + ":" + this.standalone.getPort()
				: "cluster " + ((this.cluster != null) ? this.cluster.getNodes() : List.of());
	}

}
