package io.github.ratelimit.core;

import io.micrometer.common.KeyValues;

/**
 * The observation {@value #NAME} of each decision, with two low-cardinality key values: {@code backend}
 * ({@code redis}, {@code local}, {@code custom}) and {@code outcome} ({@link #outcome(RateLimitObservationContext)}).
 * No key value holds an identity, key, path or address, so the series stay bounded.
 */
public class DefaultRateLimitObservationConvention implements RateLimitObservationConvention {

	/** The name of the observation, and of the timer Micrometer's meter handler makes of it. */
	public static final String NAME = "ratelimit.decision";

	/** The outcome of a decision the backend made that admitted. */
	public static final String ALLOWED = "allowed";

	/** The outcome of a decision the backend made that refused. */
	public static final String DENIED = "denied";

	/** The outcome when the backend failed and the policy (or every policy of the request) failed open. */
	public static final String FAILED_OPEN = "failed_open";

	/** The outcome when the backend failed and a policy failing closed refused. */
	public static final String FAILED_CLOSED = "failed_closed";

	/** The outcome when the backend failed and the in-memory fallback admitted. */
	public static final String LOCAL_ALLOWED = "local_allowed";

	/** The outcome when the backend failed and the in-memory fallback refused. */
	public static final String LOCAL_DENIED = "local_denied";

	/** A shadow policy would have denied (the request was admitted all the same). */
	public static final String SHADOW_DENIED = "shadow_denied";

	/** The outcome when an unguarded limiter threw instead of deciding. */
	public static final String ERROR = "error";

	/** The outcome while no decision is made: before it, or when the subscriber cancelled before it. */
	public static final String UNKNOWN = "unknown";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(RateLimitObservationContext context) {
		return "ratelimit decision";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RateLimitObservationContext context) {
		return KeyValues.of("backend", context.backend(), "outcome", outcome(context));
	}

	/**
	 * {@return the outcome of an observed request: the decision's, {@value #ERROR} when the limiter threw, else
	 * {@value #UNKNOWN}}
	 */
	public static String outcome(RateLimitObservationContext context) {
		RateLimitDecision decision = context.decision();
		if (decision != null) {
			return outcome(decision);
		}
		return (context.getError() != null) ? ERROR : UNKNOWN;
	}

	/**
	 * {@return the outcome of one policy's decision, by its {@link Enforcement}} A shadow policy that would have denied
	 * is {@value #SHADOW_DENIED}, unless it failed closed (then Redis, not the client, caused it).
	 */
	public static String outcome(PolicyDecision decision) {
		if (decision.policy().shadow() && !decision.allowed() && decision.enforcement() != Enforcement.FAILED_CLOSED) {
			return SHADOW_DENIED;
		}
		return switch (decision.enforcement()) {
			case ENFORCED -> decision.allowed() ? ALLOWED : DENIED;
			case FAILED_OPEN -> FAILED_OPEN;
			case FAILED_CLOSED -> FAILED_CLOSED;
			case LOCAL_FALLBACK -> decision.allowed() ? LOCAL_ALLOWED : LOCAL_DENIED;
		};
	}

	/**
	 * {@return the outcome of a whole request} When the failure modes decided: a refusal is {@value #FAILED_CLOSED} if
	 * a closed policy refused, else {@value #LOCAL_DENIED}; an admission {@value #LOCAL_ALLOWED} if a policy was
	 * enforced in memory, else {@value #FAILED_OPEN}.
	 */
	public static String outcome(RateLimitDecision decision) {
		if (!decision.degraded()) {
			if (!decision.allowed()) {
				return DENIED;
			}
			return decision.shadowDenied() ? SHADOW_DENIED : ALLOWED;
		}
		if (!decision.allowed()) {
			return decision.failedClosed() ? FAILED_CLOSED : LOCAL_DENIED;
		}
		return decision.decisions().stream().anyMatch((each) -> each.enforcement() == Enforcement.LOCAL_FALLBACK)
				? LOCAL_ALLOWED : FAILED_OPEN;
	}

}
