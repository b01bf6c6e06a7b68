package io.github.ratelimit.sample;

import com.redis.testcontainers.RedisContainer;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;

/**
 * Redis in a Docker container, handed to Spring Boot with {@code @ServiceConnection}: the alternative to the
 * embedded {@code redis-server} where Docker exists ({@code TestSampleApplication --sample.redis=docker},
 * {@code SampleApplicationContainerTests}).
 */
@TestConfiguration(proxyBeanMethods = false)
public class RedisContainerConfiguration {

	@Bean
	@ServiceConnection
	RedisContainer redisContainer() {
		return new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME.withTag("7.4"));
	}

}
