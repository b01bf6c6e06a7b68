package io.github.ratelimit.spring;

import io.github.ratelimit.core.RateLimitDecision;

/**
 * Thrown (or emitted, for reactive handlers) when a {@link RateLimited} method is denied; turned into the
 * rejection response by the starter's exception handling.
 */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient RateLimitDecision decision;

	public RateLimitExceededException(RateLimitDecision decision) {
		super("Rate limit exceeded: " + decision.decisions()
			.stream()
			.filter((d) -> !d.allowed())
			.map((d) -> d.policy().name())
			.toList(), null, false, false);
		this.decision = decision;
	}

	/**
	 * The denying decision, with every policy evaluated for the request.
	 * @return the decision
	 */
	public RateLimitDecision decision() {
		return this.decision;
	}

}
