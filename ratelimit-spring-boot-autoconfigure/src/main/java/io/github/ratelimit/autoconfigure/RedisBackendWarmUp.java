package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.dao.InvalidDataAccessApiUsageException;

/**
 * Opens the Redis backend's connection at startup, on the thread starting the application, so that the first
 * rate-limited requests neither pay for the connect within their time budget nor run it on an event loop. Redis
 * being unreachable does not stop the application: it starts, its requests are decided by their policies' failure
 * modes, and enforcement begins as soon as Redis answers. A Redis that answers but has no functions while
 * {@code ratelimit.redis.script-mode} is {@code functions} (Redis older than 7) stops the start, naming the property.
 */
final class RedisBackendWarmUp implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisBackendWarmUp.class);

	/** The longest the start waits for the warm-up. */
	private static final Duration WAIT = Duration.ofSeconds(2);

	private final RateLimitBackend backend;

	RedisBackendWarmUp(RateLimitBackend backend) {
		this.backend = backend;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!(this.backend instanceof RedisRateLimitBackend redis)) {
			return;
		}
		// a Redis that accepts connections but answers nothing (frozen, hung) would hold the start for the client's
		// command timeout: the start waits a bounded time, the warm-up goes on in the background
		CompletableFuture<Void> warmUp = CompletableFuture.runAsync(redis::connect);
		try {
			warmUp.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			logger.warn("Redis did not answer within " + WAIT.toSeconds() + " s at startup: rate-limited requests are "
					+ "decided by their policies' failure-mode until it answers; enforcement starts then, without a "
					+ "restart");
			warmUp.whenComplete((done, failure) -> {
				if (failure != null && logger.isDebugEnabled()) {
					logger.debug("Redis connection failure at startup", failure);
				}
			});
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause instanceof InvalidDataAccessApiUsageException
					&& redis.getScriptMode() == RedisRateLimitBackend.ScriptMode.FUNCTIONS) {
				// Redis answered, and has no functions: a configuration mistake, not an outage
				throw new InvalidConfigurationPropertyValueException("ratelimit.redis.script-mode", "functions",
						cause.getMessage());
			}
			logger.warn("Redis is not reachable at startup (" + cause.getMessage() + "): rate-limited requests are "
					+ "decided by their policies' failure-mode until it answers; enforcement starts then, without a "
					+ "restart");
			if (logger.isDebugEnabled()) {
				logger.debug("Redis connection failure at startup", cause);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
