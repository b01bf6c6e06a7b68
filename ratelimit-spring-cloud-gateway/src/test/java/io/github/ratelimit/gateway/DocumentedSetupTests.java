package io.github.ratelimit.gateway;

import java.time.Duration;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RedisBackendProperties;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The module's tests run on the setup docs/gateway.md gives users (Spring Cloud's BOM imported as it is, the
 * gateway starter, this module, Redis), so the integration tests start their gateways on what a user's gateway
 * runs on: here, that the Resilience4j on the class path is the one Spring Cloud's BOM manages, not the newer one
 * the starter brings alone, and that the starter builds its circuit breaker on it.
 */
class DocumentedSetupTests {

	@Test
	void resilience4jIsTheOneSpringCloudManages() {
		String managed = System.getProperty("spring-cloud.resilience4j.version");
		assertThat(managed).as("set by the module's pom (spring-cloud.resilience4j.version)").isNotBlank();
		assertThat(version(CircuitBreakerConfig.class))
			.as("Resilience4j on the test class path; the module's pom names the one Spring Cloud manages: when a new "
					+ "Spring Cloud moves it, check the engine's Resilience4j calls against it and update the pom")
			.isEqualTo(managed);
		assertThat(version(TaggedCircuitBreakerMetrics.class)).isEqualTo(managed);
	}

	@Test
	void theStartersCircuitBreakerIsBuiltOnIt() {
		RedisBackendProperties.CircuitBreaker properties = new RedisBackendProperties.CircuitBreaker(true, 50, 40, 10,
				Duration.ofSeconds(1), 3);
		CircuitBreakerConfig config = RateLimitAutoConfiguration.circuitBreakerConfig(properties);
		assertThat(config.getSlidingWindowType()).isEqualTo(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED);
		assertThat(config.getSlidingWindowSize()).isEqualTo(40);
		assertThat(config.getMinimumNumberOfCalls()).isEqualTo(10);
	}

	private static String version(Class<?> type) {
		return type.getPackage().getImplementationVersion();
	}

}
