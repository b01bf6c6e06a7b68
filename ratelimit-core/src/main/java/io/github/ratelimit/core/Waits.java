package io.github.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The one blocking wait of the starter: {@link RateLimiter#check}, {@link Permit#release()} and the servlet side wait
 * here on their non-blocking forms, whose layers bound the wait (a guarded limiter's time budget). Unlike
 * {@code Mono.block()} it may wait on any thread, as the blocking forms always could.
 */
public final class Waits {

	private Waits() {
	}

	/**
	 * {@return the value, subscribed to and waited for; null when it completes empty} A failure is rethrown as it
	 * is. An interrupt cancels the wait (the layer that made the call gives it back), the thread's flag set again.
	 * @throws IllegalStateException when the thread is interrupted while waiting
	 */
	public static <T> @Nullable T await(Mono<T> value) {
		return get(value, true);
	}

	/**
	 * Waits for a release; an interrupt ends the wait without failing (the thread's flag set again): the release goes
	 * on, and a permit that never reaches the backend is reclaimed after its policy's window.
	 */
	public static void awaitRelease(Mono<Void> release) {
		get(release, false);
	}

	private static <T> @Nullable T get(Mono<T> value, boolean interruptFails) {
		CompletableFuture<T> result = value.toFuture();
		try {
			return result.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			if (!interruptFails) {
				return null;
			}
			result.cancel(true);
			throw new IllegalStateException("Interrupted while waiting for the rate limiter", ex);
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
