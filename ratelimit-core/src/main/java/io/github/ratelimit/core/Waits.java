package io.github.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import reactor.core.publisher.Mono;

/**
 * The one blocking wait of the core: {@link RateLimiter#check} and {@link Permit#release()} wait here on their
 * non-blocking forms, whose layers bound the wait (a guarded limiter's time budget). Unlike {@code Mono.block()} it
 * may wait on any thread, as the blocking forms always could.
 */
final class Waits {

	private Waits() {
	}

	/**
	 * Subscribes and waits for the value; a failure is rethrown as it is. An interrupt cancels the wait (what the
	 * call takes is then given back by the layer that made it) and is thrown, the thread's flag set again.
	 */
	static <T> T await(Mono<T> value) {
		CompletableFuture<T> result = value.toFuture();
		try {
			return result.get();
		}
		catch (InterruptedException ex) {
			result.cancel(true);
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for the rate-limit backend", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(cause);
		}
	}

}
