package io.github.ratelimit.core;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Short ids unique across instances: a random per-process prefix and a counter. They name the entries a request
 * adds to sliding-window logs and concurrency sets, so they must not collide between instances; they carry no data
 * from the request.
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

	/**
	 * Initialises the per-process prefix (a read of {@code SecureRandom}, which may block) if not done yet. Called
	 * when a {@link DefaultRateLimiter} is created, at startup, so no request thread (an event loop) pays for it.
	 */
	public static void initialize() {
		// loading the class has done it
	}

	/**
	 * The next id.
	 * @return an id such as {@code Xb3k9QaZ1LmP.1a}
	 */
	public static String next() {
		return PREFIX + '.' + Long.toString(COUNTER.incrementAndGet(), 36);
	}

}
