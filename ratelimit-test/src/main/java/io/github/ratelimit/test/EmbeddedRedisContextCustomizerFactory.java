package io.github.ratelimit.test;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Registers the {@link EmbeddedRedis} server of a test class as the context's {@code DataRedisConnectionDetails}
 * bean. Registered in {@code META-INF/spring.factories}; does nothing for a class without the annotation.
 */
class EmbeddedRedisContextCustomizerFactory implements ContextCustomizerFactory {

	/** 1 s, not 50 ms, in tests: a busy build machine should see the limiter's decisions, not its failure modes. */
	static final String TIMEOUT_PROPERTY = "ratelimit.redis.timeout";

	static final String TEST_TIMEOUT = "1s";

	static final String DETAILS_CLASS = "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		EmbeddedRedis annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass, EmbeddedRedis.class);
		if (annotation == null) {
			return null;
		}
		if (!ClassUtils.isPresent(DETAILS_CLASS, testClass.getClassLoader())) {
			throw new IllegalStateException("@EmbeddedRedis on " + testClass.getName() + " needs Spring Boot's Redis "
					+ "support on the test class path: add org.springframework.boot:spring-boot-starter-data-redis");
		}
		return new Customizer(annotation.value());
	}

	/** Equal for equal topologies, so test classes with the same setup share a cached context. */
	private record Customizer(EmbeddedRedis.Topology topology) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration merged) {
			// below every other source: a test's own setting wins
			context.getEnvironment().getPropertySources().addLast(new MapPropertySource("embeddedRedisDefaults",
					Map.of(TIMEOUT_PROPERTY, TEST_TIMEOUT)));
			context.getBeanFactory().registerSingleton("embeddedRedisConnectionDetails",
					EmbeddedRedisConnectionDetails.shared(this.topology));
		}

	}

}
