package io.github.ratelimit.sample;

import org.testcontainers.junit.jupiter.EnabledIfDockerAvailable;

import org.springframework.context.annotation.Import;

/**
 * The sample on Redis in a Docker container ({@link RedisContainerConfiguration}, {@code @ServiceConnection}).
 * Skipped where Docker is not available, with Testcontainers' reason.
 */
@EnabledIfDockerAvailable
@Import(RedisContainerConfiguration.class)
class SampleApplicationContainerTests extends SampleContractTests {

}
