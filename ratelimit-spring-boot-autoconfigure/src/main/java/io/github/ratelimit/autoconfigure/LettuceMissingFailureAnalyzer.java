package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * The Redis backend runs on any {@link RedisConnectionFactory} (Jedis too, through Spring Data Redis), but its
 * classes refer to Lettuce's: an application on Jedis that excluded {@code lettuce-core} would fail with a
 * {@link NoClassDefFoundError} deep in the context. It stops instead with a report naming the fix.
 */
class LettuceMissingFailureAnalyzer extends AbstractFailureAnalyzer<LettuceMissingFailureAnalyzer.LettuceMissingException> {

	/** Throws when Lettuce is not on the class path of the application whose connection factory is given. */
	static void requireLettuce(RedisConnectionFactory factory) {
		if (!ClassUtils.isPresent("io.lettuce.core.RedisClient", factory.getClass().getClassLoader())) {
			throw new LettuceMissingException(factory.getClass().getName());
		}
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LettuceMissingException cause) {
		return new FailureAnalysis("The rate limiter's Redis backend needs io.lettuce:lettuce-core on the class path. "
				+ "The application's RedisConnectionFactory is " + cause.factory + ", and Lettuce is not there.",
				"Add the dependency io.lettuce:lettuce-core (the version Spring Boot manages; no code). If Redis "
						+ "should stay on Jedis, also set spring.data.redis.client-type=jedis: the limiter then "
						+ "runs on the Jedis connection factory. Or set ratelimit.enabled=false.",
				cause);
	}

	/** The application's Redis connection factory is not Lettuce's, and Lettuce is missing. */
	static final class LettuceMissingException extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		private final String factory;

		LettuceMissingException(String factory) {
			super("io.lettuce:lettuce-core is not on the class path (connection factory: " + factory + ")");
			this.factory = factory;
		}

	}

}
