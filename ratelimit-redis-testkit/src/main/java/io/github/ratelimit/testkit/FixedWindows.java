package io.github.ratelimit.testkit;

import java.time.Duration;

/**
 * Fixed windows are aligned on multiples of their length since the epoch ({@code scripts/fixed-window.lua}, and the
 * local backend alike): however long, each one ends at an instant of the wall clock (a whole minute, hour, midnight),
 * and a test whose checks on the real clock must fall in one window fails when that instant falls between two of
 * them. Redis runs on this machine, on its clock.
 */
public final class FixedWindows {

	private FixedWindows() {
	}

	/**
	 * Waits, when the current window of this length ends within the margin, until the next one has begun: checks
	 * made in less than the margin from the return then fall in one window.
	 * @param window the length of the fixed window
	 * @param margin longer than the checks that must fall in one window take, shorter than the window
	 */
	public static void awayFromWindowEnd(Duration window, Duration margin) {
		long length = window.toMillis();
		if (margin.toMillis() >= length) {
			throw new IllegalArgumentException("A margin of " + margin + " leaves no room in a window of " + window);
		}
		long now = System.currentTimeMillis();
		long end = now - Math.floorMod(now, length) + length;
		if (end - now >= margin.toMillis()) {
			return;
		}
		while ((now = System.currentTimeMillis()) < end) {
			try {
				Thread.sleep(end - now);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
