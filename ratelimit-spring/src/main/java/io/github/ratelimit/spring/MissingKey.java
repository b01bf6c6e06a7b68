package io.github.ratelimit.spring;

import io.github.ratelimit.core.PolicyDecision;

/** What happens to a request whose key cannot be resolved (no API key header, no principal). */
public enum MissingKey {

	/** All such requests share one identity, {@code anonymous}: omitting the key gives no fresh quota. The default. */
	SHARED,

	/** The policy does not apply to the request. */
	SKIP,

	/** A client error: 401 when the key is the principal, else 400 naming the key; no figures nor Retry-After. */
	DENY;

	/** The identity of {@link #SHARED}; no resolved identity equals it ({@link KeySpec#identity(String)}). */
	public static final String ANONYMOUS = "anonymous";

	private static final String DENIED = "missing-key:";

	/** The identity of a {@link #DENY} refusal (never counted nor stored), naming the source of the missed key. */
	public static String denied(KeySpec key) {
		return DENIED + key.source();
	}

	/** Whether a policy decision is a {@link #DENY} refusal for a missing key. */
	public static boolean isDenial(PolicyDecision decision) {
		return !decision.allowed() && decision.identity().startsWith(DENIED);
	}

	/** The source of the key an {@link #isDenial} refusal missed ({@code principal}, {@code header.x-api-key}). */
	public static String source(PolicyDecision decision) {
		return decision.identity().substring(DENIED.length());
	}

}
