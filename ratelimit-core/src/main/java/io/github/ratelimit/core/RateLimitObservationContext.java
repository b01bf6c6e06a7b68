package io.github.ratelimit.core;

import java.util.List;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one rate-limit decision knows: the policies checked, the kind of backend, and, once the
 * decision is made, the {@link RateLimitDecision} (or the failure an unguarded limiter threw).
 * <p>
 * It deliberately holds no identity: the identities a request is checked for are personal data and unbounded in
 * number, so they belong in no metric, span or log of an observation. The decision's {@link PolicyDecision}s do
 * carry them; a handler reads their policies and outcomes only.
 */
public class RateLimitObservationContext extends Observation.Context {

	private final List<RateLimitPolicy> policies;

	private final String backend;

	private @Nullable RateLimitDecision decision;

	/**
	 * A context of a decision about to be made.
	 * @param policies the policies of the request's entries, in order
	 * @param backend the kind of backend ({@code redis}, {@code local}, or {@code custom})
	 */
	public RateLimitObservationContext(List<RateLimitPolicy> policies, String backend) {
		this.policies = List.copyOf(policies);
		this.backend = backend;
	}

	/**
	 * The policies of the request's entries, in the order of its entries.
	 * @return the policies
	 */
	public List<RateLimitPolicy> policies() {
		return this.policies;
	}

	/**
	 * The kind of backend of the limiter: {@code redis}, {@code local}, or {@code custom}. A decision made by the
	 * failure modes keeps the limiter's backend; its outcome tells it was not that backend that decided.
	 * @return the kind of backend
	 */
	public String backend() {
		return this.backend;
	}

	/**
	 * The decision, once made.
	 * @return the decision, or null before it is made or when the limiter threw
	 */
	public @Nullable RateLimitDecision decision() {
		return this.decision;
	}

	/**
	 * Sets the decision once it is made.
	 * @param decision the decision
	 */
	public void setDecision(RateLimitDecision decision) {
		this.decision = decision;
	}

}
