package io.github.ratelimit.autoconfigure.reactive;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * Opens the application's shared reactive Redis connection at startup, on the thread starting the application.
 * Spring Data Redis opens it on first use, with a blocking connect: without this, the first rate-limited requests
 * would connect on Netty's event loops (and block them). A failure is only logged: the application starts, and
 * the connection is then opened by the first request that needs it.
 */
final class ReactiveRedisConnectionWarmUp implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ReactiveRedisConnectionWarmUp.class);

	private final ReactiveRedisConnectionFactory connectionFactory;

	ReactiveRedisConnectionWarmUp(ReactiveRedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		try {
			ReactiveRedisConnection connection = this.connectionFactory.getReactiveConnection();
			connection.close();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not connect to Redis at startup: the first rate-limited requests will connect, "
					+ "blocking their event loop while they do", ex);
		}
	}

}
