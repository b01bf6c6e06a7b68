package io.github.ratelimit.testkit;

import java.time.Duration;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Bounded polling without fixed sleeps: checks a condition every few milliseconds until it holds
 * or the timeout expires.
 */
final class Await {

	private static final long MIN_PAUSE_MILLIS = 10;

	private static final long MAX_PAUSE_MILLIS = 100;

	private Await() {
	}

	/**
	 * Polls until {@code check} returns {@code null}.
	 * @param what what is being waited for, used in the failure message
	 * @param timeout how long to wait at most
	 * @param check returns {@code null} once the condition holds, otherwise a description of why it
	 * does not hold yet; exceptions thrown by the check count as "not yet"
	 * @throws IllegalStateException if the condition does not hold within the timeout
	 */
	static void until(String what, Duration timeout, Supplier<@Nullable String> check) {
		long deadline = System.nanoTime() + timeout.toNanos();
		long pause = MIN_PAUSE_MILLIS;
		String lastReason;
		while (true) {
			try {
				lastReason = check.get();
			}
			catch (RuntimeException ex) {
				lastReason = ex.toString();
			}
			if (lastReason == null) {
				return;
			}
			if (System.nanoTime() - deadline >= 0) {
				throw new IllegalStateException(
						"Timed out after " + timeout.toMillis() + " ms waiting for " + what + ": " + lastReason);
			}
			pause(pause);
			pause = Math.min(pause * 2, MAX_PAUSE_MILLIS);
		}
	}

	static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting", ex);
		}
	}

}
