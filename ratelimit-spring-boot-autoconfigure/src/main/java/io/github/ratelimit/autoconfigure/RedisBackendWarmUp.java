package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Opens the Redis backend's connection at startup, on the thread starting the application, so that the first
 * rate-limited requests neither pay for the connect within their time budget nor run it on an event loop. Redis
 * being unreachable does not stop the application: it starts, its requests are decided by their policies' failure
 * modes, and enforcement begins as soon as Redis answers.
 */
final class RedisBackendWarmUp implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisBackendWarmUp.class);

	private final RateLimitBackend backend;

	RedisBackendWarmUp(RateLimitBackend backend) {
		this.backend = backend;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!(this.backend instanceof RedisRateLimitBackend redis)) {
			return;
		}
		try {
			redis.connect();
		}
		catch (RuntimeException ex) {
			logger.warn("Redis is not reachable at startup (" + ex.getMessage() + "): rate-limited requests are "
					+ "decided by their policies' failure-mode until it answers; enforcement starts then, without a "
					+ "restart");
			if (logger.isDebugEnabled()) {
				logger.debug("Redis connection failure at startup", ex);
			}
		}
	}

}
