package io.github.ratelimit.test;

import java.util.HashSet;
import java.util.Set;

import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tester on a three-master Redis Cluster given by {@code @EmbeddedRedis(CLUSTER)}: resets find the state on
 * every master.
 */
@SpringBootTest
@AutoConfigureMockMvc
@EmbeddedRedis(EmbeddedRedis.Topology.CLUSTER)
class ClusterRateLimitTesterTests extends RateLimitTesterContractTests {

	@Test
	void resetAllReachesEveryMaster(RedisClusterServer cluster) {
		Set<HostAndPort> masters = new HashSet<>();
		for (int i = 0; i < 12; i++) {
			String key = "key-" + i;
			assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", key)).hasStatusOk();
			masters.add(cluster.masterForKey("rl:{" + RateLimitKeys.safeIdentity("header.x-api-key:" + key) + "}:per-key:t2"));
		}
		assertThat(masters).hasSize(3);
		assertThat(this.rateLimits.resetAll()).isEqualTo(12);
		for (int i = 0; i < 12; i++) {
			assertThat(this.rateLimits.remaining("per-key", "key-" + i)).isEqualTo(2);
		}
	}

}
