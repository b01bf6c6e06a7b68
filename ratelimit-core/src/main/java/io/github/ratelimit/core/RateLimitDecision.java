package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of a whole {@link RateLimitRequest}: admitted only when every policy admits it. Policies in shadow mode
 * ({@link RateLimitPolicy#shadow()}) never decide: their decisions are kept apart ({@link #shadowDecisions()}) and
 * take no part in anything else this decision reports (admission, the deciding policy, the retry-after).
 */
public final class RateLimitDecision {

	private static final Comparator<PolicyDecision> MOST_RESTRICTIVE = Comparator
		.comparing(PolicyDecision::allowed)
		.thenComparing(PolicyDecision::retryAfter, Comparator.reverseOrder())
		.thenComparingLong(PolicyDecision::remaining)
		.thenComparing(PolicyDecision::resetAfter, Comparator.reverseOrder());

	private final List<PolicyDecision> decisions;

	private final List<PolicyDecision> shadowDecisions;

	private final boolean allowed;

	private final Permit permit;

	private final Permit reversal;

	private final Supplier<List<PolicyDecision>> reversedDecisions;

	private final @Nullable Throwable failure;

	/** A decision of one decision per policy (shadow ones set apart) holding no reversal: for a custom limiter. */
	public RateLimitDecision(List<PolicyDecision> decisions, Permit permit) {
		this(decisions, permit, Permit.NONE, () -> decisions, null);
	}

	/** A decision with its {@link #reversed()} view; {@code failure} is why the failure modes made it, if they did. */
	RateLimitDecision(List<PolicyDecision> decisions, Permit permit, Permit reversal,
			Supplier<List<PolicyDecision>> reversedDecisions, @Nullable Throwable failure) {
		this.failure = failure;
		List<PolicyDecision> enforced = new ArrayList<>(decisions.size());
		List<PolicyDecision> shadow = new ArrayList<>(0);
		boolean allowed = true;
		for (PolicyDecision decision : decisions) {
			(decision.policy().shadow() ? shadow : enforced).add(decision);
			allowed &= decision.policy().shadow() || decision.allowed();
		}
		this.decisions = List.copyOf(enforced);
		this.shadowDecisions = List.copyOf(shadow);
		this.allowed = allowed;
		this.permit = permit;
		this.reversal = reversal;
		this.reversedDecisions = reversedDecisions;
	}

	/** A decision that holds nothing to give back. */
	static RateLimitDecision withoutPermits(List<PolicyDecision> decisions, @Nullable Throwable failure) {
		return new RateLimitDecision(decisions, Permit.NONE, Permit.NONE, () -> decisions, failure);
	}

	/** {@return whether every policy admits the request} */
	public boolean allowed() {
		return this.allowed;
	}

	/** {@return whether a {@link FailureMode#CLOSED} policy refused because the backend could not decide (503)} */
	public boolean failedClosed() {
		return this.decisions.stream().anyMatch((decision) -> decision.enforcement() == Enforcement.FAILED_CLOSED);
	}

	/** {@return whether the backend failed and the failure modes decided (a decision not {@code ENFORCED})} */
	public boolean degraded() {
		for (PolicyDecision decision : this.decisions) { // a loop: asked of every request
			if (decision.enforcement().degraded()) {
				return true;
			}
		}
		return false;
	}

	/** {@return why the backend could not decide (timeout, connection, Redis error, open breaker), or empty} */
	public Optional<Throwable> failure() {
		return Optional.ofNullable(this.failure);
	}

	/** {@return one decision per policy, in request order, except the policies in shadow mode} */
	public List<PolicyDecision> decisions() {
		return this.decisions;
	}

	/** {@return what the policies in shadow mode would have decided, in request order (they admit all the same)} */
	public List<PolicyDecision> shadowDecisions() {
		return this.shadowDecisions;
	}

	/** {@return whether a policy in shadow mode would have denied the request (backend or fallback deciding)} */
	public boolean shadowDenied() {
		return this.shadowDecisions.stream()
			.anyMatch((decision) -> !decision.allowed() && decision.enforcement() != Enforcement.FAILED_CLOSED);
	}

	/** Every decision, the shadow policies' after the others'. */
	List<PolicyDecision> allDecisions() {
		if (this.shadowDecisions.isEmpty()) {
			return this.decisions;
		}
		List<PolicyDecision> all = new ArrayList<>(this.decisions);
		all.addAll(this.shadowDecisions);
		return all;
	}

	/** {@return the deciding policy: when denied the one asking the longest wait, else the least remaining} */
	public Optional<PolicyDecision> deciding() {
		@Nullable PolicyDecision deciding = null;
		for (PolicyDecision decision : this.decisions) { // a loop: asked of every request
			if (deciding == null || MOST_RESTRICTIVE.compare(decision, deciding) < 0) {
				deciding = decision;
			}
		}
		return Optional.ofNullable(deciding);
	}

	/** {@return how long until the same request can be admitted: the longest wait of the denying policies} */
	public Duration retryAfter() {
		return this.decisions.stream().map(PolicyDecision::retryAfter).max(Comparator.naturalOrder()).orElse(Duration.ZERO);
	}

	/** {@return the concurrency permits to release when the request completes; {@link Permit#NONE} for none} */
	public Permit permit() {
		return this.permit;
	}

	/**
	 * {@return what gives back everything this admitted request took, permits too (idempotent), for when a later
	 * check of the request denies it; {@link Permit#NONE} for a denied request}
	 */
	public Permit reversal() {
		return this.reversal;
	}

	/** {@return this decision once {@link #reversal()} gave everything back (the cost remaining again), no permits} */
	public RateLimitDecision reversed() {
		return new RateLimitDecision(this.reversedDecisions.get(), Permit.NONE, Permit.NONE,
				this.reversedDecisions, this.failure);
	}

	/** {@return several decisions of one request (a filter's and a method's) as one, for the headers; no permits} */
	public static RateLimitDecision merge(List<RateLimitDecision> decisions) {
		if (decisions.size() == 1) {
			return decisions.get(0);
		}
		List<PolicyDecision> all = new ArrayList<>();
		decisions.forEach((decision) -> all.addAll(decision.allDecisions()));
		return new RateLimitDecision(all, Permit.NONE);
	}

	/**
	 * {@return the decision to report when a later check denies what earlier ones admitted: those {@link #reversed()}
	 * (the caller releases their reversal), and the denying one}
	 */
	public static RateLimitDecision mergeDenied(List<RateLimitDecision> earlier, RateLimitDecision denying) {
		List<RateLimitDecision> all = new ArrayList<>(earlier.size() + 1);
		for (RateLimitDecision decision : earlier) {
			all.add(decision.allowed() ? decision.reversed() : decision);
		}
		all.add(denying);
		return merge(all);
	}

	@Override
	public String toString() {
		return "RateLimitDecision[" + (this.allowed ? "allowed" : "denied") + " " + this.decisions
				+ (this.shadowDecisions.isEmpty() ? "" : " shadow " + this.shadowDecisions) + "]";
	}

}
