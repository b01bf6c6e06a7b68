package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;

/**
 * The sample on Redis in a Docker container ({@link RedisContainerConfiguration}), for machines with Docker:
 * {@code ./mvnw -q -pl sample-app -am spring-boot:test-run
 * -Dspring-boot.run.main-class=io.github.ratelimit.sample.TestcontainersSampleApplication}.
 */
public final class TestcontainersSampleApplication {

	private TestcontainersSampleApplication() {
	}

	public static void main(String[] args) {
		SpringApplication.from(SampleApplication::main).with(RedisContainerConfiguration.class).run(args);
	}

}
