package io.github.ratelimit.core;

import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

/**
 * The observation {@value #NAME} of each decision of a {@link DefaultRateLimiter}, with two low-cardinality key
 * values: {@code backend} (the kind of backend: {@code redis}, {@code local}, {@code custom}) and {@code outcome}
 * (the whole request's: see {@link #outcome(RateLimitDecision)}). No key value ever holds an identity, a key, a path
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

	/** The outcome when an unguarded limiter threw instead of deciding. */
	public static final String ERROR = "error";

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
		return KeyValues.of("backend", context.backend(), "outcome", outcome(context.decision()));
	}

	/**
	 * The outcome of one policy's decision: {@value #ALLOWED} or {@value #DENIED} when the backend decided,
	 * otherwise by its {@link Enforcement}: {@value #FAILED_OPEN}, {@value #FAILED_CLOSED}, {@value #LOCAL_ALLOWED}
	 * or {@value #LOCAL_DENIED}.
	 * @param decision the policy's decision
	 * @return the outcome
	 */
	public static String outcome(PolicyDecision decision) {
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
	 * policy was enforced in memory and {@value #FAILED_OPEN} otherwise; {@value #ERROR} when there is no decision.
	 * @param decision the decision, or null when the limiter threw
	 * @return the outcome
	 */
	public static String outcome(@Nullable RateLimitDecision decision) {
		if (decision == null) {
			return ERROR;
		}
		if (!decision.degraded()) {
			return decision.allowed() ? ALLOWED : DENIED;
		}
		if (!decision.allowed()) {
			return decision.failedClosed() ? FAILED_CLOSED : LOCAL_DENIED;
		}
		return decision.decisions().stream().anyMatch((each) -> each.enforcement() == Enforcement.LOCAL_FALLBACK)
				? LOCAL_ALLOWED : FAILED_OPEN;
	}

}
