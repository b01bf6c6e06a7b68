package io.github.ratelimit.spring;

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
	 * The request is rejected with 429, as if the policy were exhausted.
	 */
	DENY;

	/** The identity shared by requests without a key under {@link #SHARED}. */
	public static final String ANONYMOUS = "anonymous";

}
