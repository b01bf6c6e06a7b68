package io.github.ratelimit.benchmarks;

import java.time.Duration;

/**
 * Which identities are admitted. In {@link #ALLOWED} every identity has an open limit (10^9 per minute); in
 * {@link #HALF_DENIED} the odd identities have a limit of 1 per hour, used up before the measurement, so exactly
 * half of the decisions are denials.
 */
enum Scenario {

	ALLOWED, HALF_DENIED;

	static final int IDENTITIES = 10_000;

	static final long OPEN_LIMIT = 1_000_000_000L;

	static final Duration OPEN_WINDOW = Duration.ofMinutes(1);

	static final long CLOSED_LIMIT = 1;

	static final Duration CLOSED_WINDOW = Duration.ofHours(1);

	boolean closed(int identity) {
		return this == HALF_DENIED && (identity & 1) == 1;
	}

	String key(int identity) {
		return (closed(identity) ? "c" : "o") + identity;
	}

}
