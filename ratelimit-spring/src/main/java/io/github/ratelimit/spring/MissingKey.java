package io.github.ratelimit.spring;

import io.github.ratelimit.core.PolicyDecision;

/**
 * What happens to a request whose key cannot be resolved (no API key header, no principal).
 */
public enum MissingKey {

	/**
	 * All such requests share one identity, {@code anonymous}: omitting the key gives no fresh quota. The default.
	 */
	SHARED,

	/**
	 * The policy does not apply to the request.
	 */
	SKIP,

	/**
	 * The request is rejected as a client error: 401 when the key is the principal (the request is not
	 * authenticated), else 400 naming the missing key. No {@code Retry-After} and no rate-limit figures: waiting does
	 * not make such a request succeed.
	 */
	DENY;

	/**
	 * The identity shared by requests without a key under {@link #SHARED}. Every resolved identity is qualified by
	 * its key's source ({@code header.x-api-key:...}, see {@link KeySpec#identity(String)}), so no client-supplied
	 * value reaches it.
	 */
	public static final String ANONYMOUS = "anonymous";

	private static final String DENIED = "missing-key:";

	/**
	 * The identity of a {@link #DENY} refusal: never counted nor stored.
	 * @param key the key that resolved nothing
	 * @return the identity, naming the key's source
	 */
	public static String denied(KeySpec key) {
		return DENIED + key.source();
	}

	/**
	 * Whether a decision is a {@link #DENY} refusal for a missing key.
	 * @param decision a policy decision
	 * @return true when the request was refused because it had no key
	 */
	public static boolean isDenial(PolicyDecision decision) {
		return !decision.allowed() && decision.identity().startsWith(DENIED);
	}

	/**
	 * The source of the key a {@link #DENY} refusal missed ({@code principal}, {@code header.x-api-key}).
	 * @param decision a refusal for which {@link #isDenial} holds
	 * @return the key's source
	 */
	public static String source(PolicyDecision decision) {
		return decision.identity().substring(DENIED.length());
	}

}
