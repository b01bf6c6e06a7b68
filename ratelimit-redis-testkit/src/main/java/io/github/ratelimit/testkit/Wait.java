package io.github.ratelimit.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Bounded polling for tests: waits until a condition holds, checking it every few milliseconds, and fails with
 * {@link IllegalStateException} when it does not hold in time. An exception thrown by the condition counts as "not
 * yet" (Redis may be restarting, an application still starting). For outcomes, never for timing assertions.
 */
public final class Wait {

	private Wait() {
	}

	/**
	 * Waits until {@code condition} holds.
	 * @param timeout how long to wait at most
	 * @param condition the condition
	 * @throws IllegalStateException when it does not hold in time
	 */
	public static void until(Duration timeout, BooleanSupplier condition) {
		until("a condition", timeout, condition);
	}

	/**
	 * Waits until {@code condition} holds.
	 * @param what what is waited for, for the failure message
	 * @param timeout how long to wait at most
	 * @param condition the condition
	 * @throws IllegalStateException when it does not hold in time
	 */
	public static void until(String what, Duration timeout, BooleanSupplier condition) {
		Await.until(what, timeout, () -> condition.getAsBoolean() ? null : "not yet");
	}

}
