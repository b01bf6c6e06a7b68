package io.github.ratelimit.core;

import java.util.Locale;

/**
 * The kinds of backend trouble a guarded {@link DefaultRateLimiter} counts ({@link DefaultRateLimiter#errorCount});
 * none fails a caller.
 */
public enum BackendErrorKind {

	/** A decision's backend call did not answer within the time budget. */
	TIMEOUT,

	/** A decision's backend call failed (a connection error, an error reply). */
	BACKEND_ERROR,

	/** A decision's backend call was not made because the circuit breaker is open. */
	CIRCUIT_OPEN,

	/** What a late answer took, or a Cluster slot that admitted a request another slot denied, was not given back. */
	GIVE_BACK_FAILED,

	/** A permit's release failed or was not confirmed within the budget. */
	RELEASE_FAILED;

	/** {@return the kind as a metric tag value: its name in lower case ({@code give_back_failed})} */
	public String tagValue() {
		return name().toLowerCase(Locale.ROOT);
	}

}
