package io.github.ratelimit.core;

/**
 * How a {@link PolicyDecision} was made: by the backend as configured, or by the policy's {@link FailureMode}
 * because the backend could not decide.
 */
public enum Enforcement {

	/** The backend decided (Redis, or the local backend when it is the configured one). Figures are exact. */
	ENFORCED,

	/** The backend failed and the policy fails open: admitted, unchecked and uncounted. No figures. */
	FAILED_OPEN,

	/** The backend failed and the policy fails closed: refused. No figures. */
	FAILED_CLOSED,

	/** The backend failed and the policy is enforced in this instance's memory instead. Figures are this instance's. */
	LOCAL_FALLBACK;

	/** {@return whether the decision carries figures (remaining, reset) worth reporting: enforced or local} */
	public boolean hasFigures() {
		return this == ENFORCED || this == LOCAL_FALLBACK;
	}

	/** {@return whether the backend failed for this decision (every failure-mode outcome)} */
	public boolean degraded() {
		return this != ENFORCED;
	}

}
