package io.github.ratelimit.core;

import java.util.Locale;

/**
 * What a policy does when its backend cannot decide: Redis is down, frozen, slower than the limiter's time budget,
 * or the circuit breaker around it is open.
 */
public enum FailureMode {

	/** The request goes through, unchecked and uncounted, until the backend answers again. The default. */
	OPEN("open"),

	/** The request is refused. A web request gets 503 (the client did nothing wrong) with {@code Retry-After}. */
	CLOSED("closed"),

	/** The policy is enforced in this instance's memory: up to the limit per instance. */
	LOCAL("local");

	private final String id;

	FailureMode(String id) {
		this.id = id;
	}

	/** {@return the configuration name: {@code open}, {@code closed} or {@code local}} */
	public String id() {
		return this.id;
	}

	/**
	 * {@return the failure mode of a configuration name, in any case}
	 * @throws IllegalArgumentException naming the accepted values when the name is unknown
	 */
	public static FailureMode fromId(String value) {
		String normalized = value.trim().toLowerCase(Locale.ROOT);
		for (FailureMode mode : values()) {
			if (mode.id.equals(normalized)) {
				return mode;
			}
		}
		throw new IllegalArgumentException("Unknown failure mode '" + value + "'; expected one of: open, closed, local");
	}

}
