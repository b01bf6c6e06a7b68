package io.github.ratelimit.it.servlet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.it.support.FrozenRedisHealthScenarios;
import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.data.redis.health.DataRedisReactiveHealthIndicator;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Health on the servlet stack while Redis is frozen, with the documented production setup
 * ({@link FrozenRedisHealthScenarios}). Spring Boot registers its reactive Redis contributor whenever Reactor is on
 * the class path (the starter brings it), and the servlet health endpoint blocks on it without a timeout of its
 * own: only the Redis client's command timeout bounds the answer.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FrozenRedisHealthIntegrationTests {

	private static RedisServer redis;

	private static ConfigurableApplicationContext application;

	@BeforeAll
	static void start() {
		redis = RedisServer.start();
		List<String> properties = new ArrayList<>(FrozenRedisHealthScenarios.PRODUCTION_SETUP);
		properties.addAll(FrozenRedisHealthScenarios.VISIBLE_DETAILS);
		application = Instances.start(redis, properties.toArray(String[]::new));
	}

	@AfterAll
	static void stop() {
		Instances.stop(application);
		if (redis != null) {
			redis.close();
		}
	}

	@Test
	void theAggregateAnswersDownWhileRedisIsFrozenAndTheProbesStayUp() {
		assertThat(application.getBean("redisHealthContributor")).isInstanceOf(DataRedisReactiveHealthIndicator.class);
		Http http = new Http(Instances.port(application), FrozenRedisHealthScenarios.CLIENT_TIMEOUT);
		FrozenRedisHealthScenarios.healthAnswersWhileRedisIsFrozen(
				(path, client) -> http.get(path, "X-Client", client), redis);
	}

}
