package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Connection factories of a test Cluster as an instance of the starter makes them, each with a client of its own. */
final class ClusterFactories {

	private ClusterFactories() {
	}

	/**
	 * A started factory on the cluster's nodes: like the starter's auto-configuration, reconnect attempts at most a
	 * second apart; a command timeout of a minute, so that only the limiter's budget gives up on a call.
	 * @param resources where what to close is added, in the order to close it backwards
	 */
	static LettuceConnectionFactory started(RedisClusterServer cluster, List<AutoCloseable> resources) {
		ClientResources clientResources = ClientResources.builder()
			.reconnectDelay(() -> Delay.exponential(Duration.ofMillis(1), Duration.ofSeconds(1), 2,
					TimeUnit.MILLISECONDS))
			.build();
		resources.add(() -> clientResources.shutdown(0, 1, TimeUnit.SECONDS));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster.nodes().stream().map(HostAndPort::toString).toList()),
				LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofMinutes(1))
					.clientResources(clientResources)
					.build());
		factory.afterPropertiesSet();
		factory.start();
		resources.add(factory::destroy);
		return factory;
	}

	/** Closes what a test started, the last first. */
	static void closeBackwards(List<AutoCloseable> resources) throws Exception {
		for (int i = resources.size() - 1; i >= 0; i--) {
			resources.get(i).close();
		}
	}

}
