package io.github.ratelimit.core;

import io.micrometer.common.KeyValues;

/**
 * The observation {@value #NAME} of each decision of a {@link DefaultRateLimiter}, with two low-cardinality key
 * values: {@code backend} (the kind of backend: {@code redis}, {@code local}, {@code custom}) and {@code outcome}
 * (the whole request's: see {@link #outcome(RateLimitObservationContext)}). No key value ever holds an identity, a key, a path
 * or an address: the number of series stays bounded by the number of backends and outcomes.
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

	/**
	 * The outcome of a policy in shadow mode that would have denied (the request was admitted all the same), and of
	 * an admitted request that such a policy would have denied.
	 */
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
	 * The outcome of an observed request: the decision's ({@link #outcome(RateLimitDecision)}), {@value #ERROR} when
	 * the limiter threw, {@value #UNKNOWN} while there is no decision (when the observation starts, or when the
	 * subscriber cancelled before the decision was made).
	 * @param context the observation's context
	 * @return the outcome
	 */
	public static String outcome(RateLimitObservationContext context) {
		RateLimitDecision decision = context.decision();
		if (decision != null) {
			return outcome(decision);
		}
		return (context.getError() != null) ? ERROR : UNKNOWN;
	}

	/**
	 * The outcome of one policy's decision: {@value #ALLOWED} or {@value #DENIED} when the backend decided,
	 * otherwise by its {@link Enforcement}: {@value #FAILED_OPEN}, {@value #FAILED_CLOSED}, {@value #LOCAL_ALLOWED}
	 * or {@value #LOCAL_DENIED}. A policy in shadow mode that would have denied is {@value #SHADOW_DENIED} (unless it
	 * failed closed: {@value #FAILED_CLOSED} tells that Redis, not the client, caused it).
	 * @param decision the policy's decision
	 * @return the outcome
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
	 * The outcome of a whole request, from the same values as {@link #outcome(PolicyDecision)}: {@value #ALLOWED} or
	 * {@value #DENIED} when the backend decided; when the failure modes decided, a refusal is {@value #FAILED_CLOSED}
	 * if a closed policy refused and {@value #LOCAL_DENIED} otherwise, an admission {@value #LOCAL_ALLOWED} if a
	 * policy was enforced in memory and {@value #FAILED_OPEN} otherwise. An admission the backend made that a policy
	 * in shadow mode would have denied is {@value #SHADOW_DENIED}.
	 * @param decision the decision
	 * @return the outcome
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
