package io.github.ratelimit.test;

import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * The JUnit side of {@link EmbeddedRedis}: starts the class's server before its tests (so a missing
 * {@code redis-server} fails the class with the testkit's message, not a context load), and resolves
 * {@link RedisServer} and {@link RedisClusterServer} parameters to the shared servers.
 */
class EmbeddedRedisExtension implements BeforeAllCallback, ParameterResolver {

	@Override
	public void beforeAll(ExtensionContext context) {
		server(topology(context));
	}

	@Override
	public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
		Class<?> type = parameter.getParameter().getType();
		return type == RedisServer.class || type == RedisClusterServer.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
		Class<?> type = parameter.getParameter().getType();
		EmbeddedRedis.Topology topology = topology(extension);
		EmbeddedRedis.Topology wanted = (type == RedisClusterServer.class) ? EmbeddedRedis.Topology.CLUSTER
				: EmbeddedRedis.Topology.STANDALONE;
		if (wanted != topology) {
			throw new ParameterResolutionException("A " + type.getSimpleName() + " parameter needs @EmbeddedRedis("
					+ wanted + ") but " + extension.getRequiredTestClass().getName() + " has @EmbeddedRedis(" + topology
					+ ")");
		}
		return server(topology);
	}

	private static Object server(EmbeddedRedis.Topology topology) {
		return switch (topology) {
			case STANDALONE -> RedisServers.standalone();
			case CLUSTER -> RedisServers.cluster();
		};
	}

	private static EmbeddedRedis.Topology topology(ExtensionContext context) {
		EmbeddedRedis annotation = TestContextAnnotationUtils.findMergedAnnotation(context.getRequiredTestClass(),
				EmbeddedRedis.class);
		return (annotation != null) ? annotation.value() : EmbeddedRedis.Topology.STANDALONE;
	}

}
