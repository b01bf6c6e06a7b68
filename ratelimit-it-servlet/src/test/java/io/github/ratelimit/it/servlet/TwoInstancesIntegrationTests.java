package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the application on their own random ports, sharing one Redis, enforce one limit together
 * (policy {@code shared}: GCRA, 10 per hour per client, on {@code /shared/**}).
 */
class TwoInstancesIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void startInstances() {
		first = Instances.start(redis);
		second = Instances.start(redis);
	}

	@AfterAll
	static void stopInstances() {
		Instances.stop(first, second);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
	}

	@Test
	void alternatingRequestsShareOneLimit() {
		Http[] instances = { http(first), http(second) };
		int[] admitted = new int[2];
		for (int i = 0; i < 30; i++) {
			int status = instances[i % 2].status("/shared/hello");
			if (status == 200) {
				admitted[i % 2]++;
			}
			else {
				assertThat(status).isEqualTo(429);
			}
		}
		assertThat(admitted[0] + admitted[1]).isEqualTo(10);
		assertThat(admitted[0]).isEqualTo(5);
		assertThat(admitted[1]).isEqualTo(5);
	}

	@Test
	void concurrentRequestsToBothInstancesAdmitExactlyTheLimit() {
		Http[] instances = { http(first), http(second) };
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			responses.add(instances[i % 2].getAsync("/shared/hello"));
		}
		int ok = 0;
		int denied = 0;
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			int status = response.join().statusCode();
			if (status == 200) {
				ok++;
			}
			else if (status == 429) {
				denied++;
			}
		}
		assertThat(ok).isEqualTo(10);
		assertThat(denied).isEqualTo(30);
	}

	private static Http http(ConfigurableApplicationContext context) {
		return Instances.http(context);
	}

}
