package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.ratelimit.gateway.GatewayIntegrationTests.remaining;
import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways over a real Redis Cluster (three masters): limits shared across the instances, and a route's
 * policies checked together (one identity's keys share a hash slot, so one script decides them all).
 */
class GatewayClusterIntegrationTests {

	private static RedisClusterServer cluster;

	private static Backend backend;

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void start() {
		cluster = RedisServers.cluster();
		backend = Backend.start();
		String nodes = cluster.masters().stream().map(Object::toString).collect(Collectors.joining(","));
		first = GatewayTestApplication.start(backend, "--spring.data.redis.cluster.nodes=" + nodes);
		second = GatewayTestApplication.start(backend, "--spring.data.redis.cluster.nodes=" + nodes);
	}

	@AfterAll
	static void stop() {
		GatewayTestApplication.closeAll(first, second, backend);
	}

	@BeforeEach
	void freshCounters() {
		cluster.flushAll();
	}

	@Test
	void twoGatewaysShareOneLimitForEveryClient() {
		for (String client : List.of("cluster-a", "cluster-b", "cluster-c", "cluster-d")) {
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 7; i++) {
				statuses.add(get((i % 2 == 0) ? first : second, "/shared/x", client).statusCode());
			}
			assertThat(statuses).as(client).containsExactly(200, 200, 200, 200, 200, 429, 429);
		}
	}

	@Test
	void aRoutesPoliciesAreCheckedTogether() {
		for (int i = 1; i <= 3; i++) {
			assertThat(get((i % 2 == 0) ? first : second, "/multi/x", "cluster-multi").statusCode()).isEqualTo(200);
		}
		HttpResponse<String> denied = get(first, "/multi/x", "cluster-multi");
		assertThat(denied.statusCode()).isEqualTo(429);
		assertThat(header(denied, "Content-Type")).startsWith("application/problem+json");
		assertThat(remaining(denied, "per-minute")).isZero();
		assertThat(remaining(denied, "per-hour")).isEqualTo(2);
	}

}
