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
 * Opens the Redis backend's connection at startup, so no request pays for it. An unreachable Redis does not stop the
 * start; one without functions under {@code script-mode: functions} does, naming the property.
 */
final class RedisBackendWarmUp implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisBackendWarmUp.class);

	/** The longest the start waits for the warm-up. */
	private static final Duration WAIT = Duration.ofSeconds(2);

	private static final String DEGRADED = ": rate-limited requests are decided by their policies' failure-mode "
			+ "until it answers; enforcement starts then, without a restart";

	private final RateLimitBackend backend;

	RedisBackendWarmUp(RateLimitBackend backend) {
		this.backend = backend;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!(this.backend instanceof RedisRateLimitBackend redis)) {
			return;
		}
		// a frozen Redis would hold the start for the client's command timeout: wait a bounded time, the rest goes on
		// in the background
		CompletableFuture<Void> warmUp = CompletableFuture.runAsync(redis::connect);
		try {
			warmUp.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			logger.warn("Redis did not answer within " + WAIT.toSeconds() + " s at startup" + DEGRADED);
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
			logger.warn("Redis is not reachable at startup (" + cause.getMessage() + ")" + DEGRADED);
			if (logger.isDebugEnabled()) {
				logger.debug("Redis connection failure at startup", cause);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
