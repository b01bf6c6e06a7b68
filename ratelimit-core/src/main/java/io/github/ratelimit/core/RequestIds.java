package io.github.ratelimit.core;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Short ids unique across instances (a random per-process prefix and a counter) that carry nothing of the request:
 * a window's refund names its request, to give back once.
 */
final class RequestIds {

	private static final String PREFIX = randomPrefix();

	private static final AtomicLong COUNTER = new AtomicLong();

	private RequestIds() {
	}

	private static String randomPrefix() {
		byte[] bytes = new byte[9];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	/** Reads {@code SecureRandom} (which may block) at startup, so that no event loop pays for it. */
	public static void initialize() {
		// loading the class has done it
	}

	/** @return the next id, such as {@code Xb3k9QaZ1LmP.1a} */
	public static String next() {
		return PREFIX + '.' + Long.toString(COUNTER.incrementAndGet(), 36);
	}

}
