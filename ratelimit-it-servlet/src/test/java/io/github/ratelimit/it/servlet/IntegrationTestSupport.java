package io.github.ratelimit.it.servlet;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * One application ({@link TestApplication}) on a random port, on the shared standalone Redis server, emptied
 * before each test. Every test class extending this shares the one application context.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class IntegrationTestSupport {

	static final RedisServer redis = RedisServers.standalone();

	@LocalServerPort
	int port;

	Http http;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		this.http = new Http(this.port);
	}

}
