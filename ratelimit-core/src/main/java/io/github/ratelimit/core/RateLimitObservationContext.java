package io.github.ratelimit.core;

import java.util.List;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one decision knows: the policies, the kind of backend and, once made, the
 * {@link RateLimitDecision}. It holds no identity (personal data, unbounded).
 */
public class RateLimitObservationContext extends Observation.Context {

	private final List<RateLimitPolicy> policies;

	private final String backend;

	private @Nullable RateLimitDecision decision;

	/** A context of a decision about to be made: its entries' policies in order, the kind of backend. */
	public RateLimitObservationContext(List<RateLimitPolicy> policies, String backend) {
		this.policies = List.copyOf(policies);
		this.backend = backend;
	}

	/** {@return the policies of the request's entries, in order} */
	public List<RateLimitPolicy> policies() {
		return this.policies;
	}

	/** {@return the limiter's backend ({@code redis}, {@code local}, {@code custom}), whoever decided} */
	public String backend() {
		return this.backend;
	}

	/** {@return the decision, or null before it is made or when the limiter threw} */
	public @Nullable RateLimitDecision decision() {
		return this.decision;
	}

	/** Sets the decision, once made. */
	public void setDecision(RateLimitDecision decision) {
		this.decision = decision;
	}

}
