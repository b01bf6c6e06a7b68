package io.github.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.Fuseable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The one blocking wait of the starter: {@link RateLimiter#check}, {@link Permit#release()} and the servlet side wait
 * here on their non-blocking forms, whose layers bound the wait (a guarded limiter's time budget). Unlike
 * {@code Mono.block()} it may wait on any thread, as the blocking forms always could.
 */
public final class Waits {

	/** The context key of the thread waiting here for the answer. */
	private static final Object WAITER = Waits.class;

	private Waits() {
	}

	/**
	 * {@return whether the current thread is the one waiting here for the answer of the {@code Mono} whose context
	 * this is} Such a thread blocks anyway: a layer may wait on it (for a lock) instead of handing the work to another
	 * thread and waking this one from there. Any other thread (an event loop delivering a fallback) must not wait.
	 * This is the hook for a backend that would block ({@link RateLimitBackend}): it may wait on a thread for which
	 * this is true, and only interruptibly (an interrupt must end the wait, which then fails here as documented).
	 * The mark is in the context of {@code await}'s own subscription and names the waiting thread: a layer that
	 * subscribes anew (a guarded limiter's call) does not carry it, and work moved to another thread
	 * ({@code publishOn}) is not on that thread; neither is ever waited on.
	 * @param context the context of the subscription
	 */
	public static boolean waitsHere(ContextView context) {
		return context.getOrDefault(WAITER, null) == Thread.currentThread();
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

	@SuppressWarnings("unchecked")
	private static <T> @Nullable T get(Mono<T> value, boolean interruptFails) {
		if (value instanceof Fuseable.ScalarCallable<?> scalar) {
			// a value held already (Mono.just, Mono.empty: a release with nothing to give back): nothing to wait for
			try {
				return (T) scalar.call();
			}
			catch (Exception ex) {
				// Mono.error's call() wraps a checked exception or an Error: rethrown as the wait below would
				throw rethrown(Exceptions.unwrap(ex));
			}
		}
		CompletableFuture<T> result = value.contextWrite(Context.of(WAITER, Thread.currentThread())).toFuture();
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
			throw rethrown(ex.getCause());
		}
	}

	/** A failure as it is when unchecked, else in an {@link IllegalStateException}. */
	private static RuntimeException rethrown(@Nullable Throwable failure) {
		if (failure instanceof RuntimeException runtime) {
			return runtime;
		}
		if (failure instanceof Error error) {
			throw error;
		}
		return new IllegalStateException(failure);
	}

}
