package io.github.ratelimit.test;

import io.github.ratelimit.testkit.RedisBinary;
import io.github.ratelimit.testkit.RedisServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A real Redis for an application run during development (Spring Boot's development-time services, without Docker):
 * a {@code redis-server} of its own, started and stopped with the context, e.g. from a {@code main} in
 * {@code src/test/java}: {@code SpringApplication.from(MyApplication::main).with(EmbeddedRedisConfiguration.class)}.
 * In tests, prefer {@link EmbeddedRedis}; do not use both in one context.
 */
@TestConfiguration(proxyBeanMethods = false)
public class EmbeddedRedisConfiguration {

	private static final Log logger = LogFactory.getLog(EmbeddedRedisConfiguration.class);

	@Bean(destroyMethod = "close")
	RedisServer embeddedRedisServer() {
		RedisServer server = RedisServer.start();
		logger.info("Started " + RedisBinary.get() + " on " + server.uri() + " (stopped with the application)");
		return server;
	}

	@Bean
	EmbeddedRedisConnectionDetails embeddedRedisConnectionDetails(RedisServer embeddedRedisServer) {
		return EmbeddedRedisConnectionDetails.of(embeddedRedisServer);
	}

}
