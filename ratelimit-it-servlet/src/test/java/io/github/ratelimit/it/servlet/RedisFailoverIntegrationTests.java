package io.github.ratelimit.it.servlet;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.HttpLoad;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisSentinelServer;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A master failover under load, behind Sentinel and in a Redis Cluster, with the application configured the Spring
 * Boot way ({@code spring.data.redis.sentinel.*}, {@code spring.data.redis.cluster.*}) and nothing else: no request
 * hangs, no 5xx but the closed policy's 503s while the failover runs, and decisions are enforced by Redis again once
 * the client knows the new master.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedisFailoverIntegrationTests {

	private static final Duration FAILOVER = Duration.ofSeconds(30);

	@Test
	void sentinelMasterFailoverUnderLoad() {
		try (RedisSentinelServer sentinel = RedisSentinelServer.start()) {
			ConfigurableApplicationContext app = Outages.start(
					"spring.data.redis.sentinel.master=" + sentinel.masterName(),
					"spring.data.redis.sentinel.nodes=" + nodes(sentinel.sentinels()));
			try {
				Http http = Outages.http(app);
				Outages.awaitEnforced(http);
				String tracked = "tracked-" + Outages.nextClient();
				List<HttpLoad.Response> responses;
				long failedAt;
				try (HttpLoad load = Outages.load(Outages.port(app))) {
					Wait.until(FAILOVER, () -> load.responses().size() > 50);
					// three of five used just before the master dies: what the replica had not received is lost
					assertThat(Outages.admittedOnClosedPath(tracked, 3, http)).isEqualTo(3);
					failedAt = System.nanoTime();
					sentinel.killMaster();
					sentinel.awaitFailover(FAILOVER);
					Outages.awaitEnforced(http);
					responses = load.stop();
				}
				assertFailoverOutcomes(responses, failedAt);
				assertThat(Outages.admittedOnClosedPath(8, http)).isEqualTo(5);
				int admittedAfter = Outages.admittedOnClosedPath(tracked, 8, http);
				System.out.println("Sentinel failover: " + (admittedAfter - 2) + " of 3 admissions made just before "
						+ "the master was killed were lost (admitted again after the failover)");
				assertThat(admittedAfter).isBetween(2, 5);
			}
			finally {
				app.close();
			}
		}
	}

	@Test
	void clusterMasterFailoverUnderLoad() {
		try (RedisClusterServer cluster = RedisClusterServer.start(3, 1)) {
			ConfigurableApplicationContext app = Outages.start("spring.data.redis.cluster.nodes=" + nodes(cluster.masters()));
			try {
				Http http = Outages.http(app);
				Outages.awaitEnforced(http);
				List<HttpLoad.Response> responses;
				long failedAt;
				try (HttpLoad load = Outages.load(Outages.port(app))) {
					Wait.until(FAILOVER, () -> load.responses().size() > 50);
					failedAt = System.nanoTime();
					// the load's 50 clients spread over every slot range: one master's share of them fails over
					cluster.killMaster(cluster.masters().get(0));
					cluster.awaitFailover(FAILOVER);
					// enforced again for clients on every master, the promoted replica's included
					Wait.until(FAILOVER, () -> load.responses()
						.stream()
						.filter((response) -> response.sentAfter(System.nanoTime() - TimeUnit.SECONDS.toNanos(1)))
						.filter((response) -> response.path().equals("/outage/closed"))
						.count() > 20
							&& recentlyAllEnforced(load.responses()));
					responses = load.stop();
				}
				assertFailoverOutcomes(responses, failedAt);
				assertThat(Outages.admittedOnClosedPath(8, http)).isEqualTo(5);
			}
			finally {
				app.close();
			}
		}
	}

	/** The closed path's last 20 answers were all decided by Redis (no 503). */
	private static boolean recentlyAllEnforced(List<HttpLoad.Response> responses) {
		List<HttpLoad.Response> closed = responses.stream()
			.filter((response) -> response.path().equals("/outage/closed"))
			.toList();
		return closed.size() >= 20
				&& closed.subList(closed.size() - 20, closed.size()).stream().allMatch((r) -> r.status() != 503);
	}

	private static void assertFailoverOutcomes(List<HttpLoad.Response> responses, long failedAt) {
		assertThat(responses).allSatisfy((response) -> {
			assertThat(response.error()).as("%s", response).isNull();
			if (!response.path().equals("/outage/closed")) {
				assertThat(response.status()).as("%s", response).isIn(200, 429);
			}
			else {
				assertThat(response.status()).as("%s", response).isIn(200, 429, 503);
			}
		});
		assertThat(responses.stream().filter((response) -> response.sentAfter(failedAt))).isNotEmpty();
	}

	private static String nodes(List<HostAndPort> nodes) {
		return nodes.stream().map((node) -> node.host() + ":" + node.port()).collect(Collectors.joining(","));
	}

}
