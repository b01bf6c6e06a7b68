package io.github.ratelimit.test;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * What {@link EmbeddedRedis} does. For JUnit: starts the class's server before its tests (a missing
 * {@code redis-server} fails the class, not a context load) and resolves server parameters. For Spring (in
 * {@code META-INF/spring.factories}): registers that server as the context's {@code DataRedisConnectionDetails}.
 */
class EmbeddedRedisExtension implements BeforeAllCallback, ParameterResolver, ContextCustomizerFactory {

	@Override
	public void beforeAll(ExtensionContext context) {
		server(topology(context.getRequiredTestClass()));
	}

	@Override
	public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
		Class<?> type = parameter.getParameter().getType();
		return type == RedisServer.class || type == RedisClusterServer.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
		Class<?> type = parameter.getParameter().getType();
		EmbeddedRedis.Topology topology = topology(extension.getRequiredTestClass());
		EmbeddedRedis.Topology wanted = (type == RedisClusterServer.class) ? EmbeddedRedis.Topology.CLUSTER
				: EmbeddedRedis.Topology.STANDALONE;
		if (wanted != topology) {
			throw new ParameterResolutionException("A " + type.getSimpleName() + " parameter needs @EmbeddedRedis("
					+ wanted + ") but " + extension.getRequiredTestClass().getName() + " has @EmbeddedRedis(" + topology
					+ ")");
		}
		return server(topology);
	}

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		EmbeddedRedis annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass, EmbeddedRedis.class);
		if (annotation == null) {
			return null;
		}
		if (!ClassUtils.isPresent("org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails",
				testClass.getClassLoader())) {
			throw new IllegalStateException("@EmbeddedRedis on " + testClass.getName() + " needs Spring Boot's Redis "
					+ "support on the test class path: add org.springframework.boot:spring-boot-starter-data-redis");
		}
		return new Customizer(annotation.value());
	}

	/** The JVM's shared server of a topology, started on first use. */
	private static Object server(EmbeddedRedis.Topology topology) {
		return switch (topology) {
			case STANDALONE -> RedisServers.standalone();
			case CLUSTER -> RedisServers.cluster();
		};
	}

	private static EmbeddedRedis.Topology topology(Class<?> testClass) {
		EmbeddedRedis annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass, EmbeddedRedis.class);
		return (annotation != null) ? annotation.value() : EmbeddedRedis.Topology.STANDALONE;
	}

	/** Equal for equal topologies, so test classes with the same setup share a cached context. */
	private record Customizer(EmbeddedRedis.Topology topology) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration merged) {
			// 1 s, not 50 ms: a busy build machine should see decisions, not failure modes; below every other
			// source, so a test's own setting wins
			context.getEnvironment().getPropertySources().addLast(new MapPropertySource("embeddedRedisDefaults",
					Map.of("ratelimit.redis.timeout", "1s")));
			Object server = server(this.topology);
			context.getBeanFactory().registerSingleton("embeddedRedisConnectionDetails",
					(server instanceof RedisClusterServer cluster) ? EmbeddedRedisConnectionDetails.of(cluster)
							: EmbeddedRedisConnectionDetails.of((RedisServer) server));
		}

	}

}
