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

	/**
	 * A decision that holds no reversal (for a custom {@link RateLimiter} or a test).
	 * @param decisions one decision per policy (those of shadow policies are set apart)
	 * @param permit the concurrency permits held
	 */
	public RateLimitDecision(List<PolicyDecision> decisions, Permit permit) {
		this(decisions, permit, Permit.NONE);
	}

	/**
	 * A decision.
	 * @param decisions one decision per policy
	 * @param permit the concurrency permits held
	 * @param reversal gives back everything an admitted request took
	 */
	public RateLimitDecision(List<PolicyDecision> decisions, Permit permit, Permit reversal) {
		this(decisions, permit, reversal, () -> decisions);
	}

	/**
	 * A decision.
	 * @param decisions one decision per policy
	 * @param permit the concurrency permits held
	 * @param reversal gives back everything an admitted request took
	 * @param reversedDecisions the decisions as they stand once the reversal has given everything back
	 */
	RateLimitDecision(List<PolicyDecision> decisions, Permit permit, Permit reversal,
			Supplier<List<PolicyDecision>> reversedDecisions) {
		this(decisions, permit, reversal, reversedDecisions, null);
	}

	/**
	 * A decision, made by the policies' failure modes when {@code failure} is not null.
	 * @param decisions one decision per policy
	 * @param permit the concurrency permits held
	 * @param reversal gives back everything an admitted request took
	 * @param reversedDecisions the decisions as they stand once the reversal has given everything back
	 * @param failure why the backend could not decide, or null when it did
	 */
	RateLimitDecision(List<PolicyDecision> decisions, Permit permit, Permit reversal,
			Supplier<List<PolicyDecision>> reversedDecisions, @Nullable Throwable failure) {
		this.failure = failure;
		List<PolicyDecision> enforced = new ArrayList<>(decisions.size());
		List<PolicyDecision> shadow = new ArrayList<>(0);
		for (PolicyDecision decision : decisions) {
			(decision.policy().shadow() ? shadow : enforced).add(decision);
		}
		this.decisions = List.copyOf(enforced);
		this.shadowDecisions = List.copyOf(shadow);
		this.allowed = this.decisions.stream().allMatch(PolicyDecision::allowed);
		this.permit = permit;
		this.reversal = reversal;
		this.reversedDecisions = reversedDecisions;
	}

	/**
	 * Whether every policy admits the request.
	 * @return true when admitted
	 */
	public boolean allowed() {
		return this.allowed;
	}

	/**
	 * Whether a policy that fails closed refused the request because the backend could not decide: the client did
	 * nothing wrong (a web request gets 503, not 429).
	 * @return true when refused by a {@link FailureMode#CLOSED} policy
	 */
	public boolean failedClosed() {
		return this.decisions.stream().anyMatch((decision) -> decision.enforcement() == Enforcement.FAILED_CLOSED);
	}

	/**
	 * Whether the backend failed and the policies' failure modes decided.
	 * @return true when any decision is not {@link Enforcement#ENFORCED}
	 */
	public boolean degraded() {
		return this.decisions.stream().anyMatch((decision) -> decision.enforcement().degraded());
	}

	/**
	 * Why the backend could not decide, when it could not: a timeout, a connection failure, an error from Redis, or
	 * the open circuit breaker.
	 * @return the failure, empty when the backend decided
	 */
	public Optional<Throwable> failure() {
		return Optional.ofNullable(this.failure);
	}

	/**
	 * One decision per policy, in request order, except the policies in shadow mode.
	 * @return the decisions
	 */
	public List<PolicyDecision> decisions() {
		return this.decisions;
	}

	/**
	 * The decisions of the policies in shadow mode, in request order: what each would have decided. A shadow policy
	 * that would have denied ({@link PolicyDecision#allowed()} false) admitted the request all the same.
	 * @return the shadow decisions, empty when no shadow policy applied
	 */
	public List<PolicyDecision> shadowDecisions() {
		return this.shadowDecisions;
	}

	/**
	 * Whether a policy in shadow mode would have denied the request (had the backend or the fallback decide).
	 * @return true when a shadow policy would have denied
	 */
	public boolean shadowDenied() {
		return this.shadowDecisions.stream()
			.anyMatch((decision) -> !decision.allowed() && decision.enforcement() != Enforcement.FAILED_CLOSED);
	}

	/**
	 * Every decision, the shadow policies' after the others'.
	 * @return all the decisions
	 */
	List<PolicyDecision> allDecisions() {
		if (this.shadowDecisions.isEmpty()) {
			return this.decisions;
		}
		List<PolicyDecision> all = new ArrayList<>(this.decisions);
		all.addAll(this.shadowDecisions);
		return all;
	}

	/**
	 * The policy that decided: when denied, the denying policy that asks the longest wait; when admitted, the one
	 * with the least remaining. Empty when no policy applied.
	 * @return the deciding policy's decision
	 */
	public Optional<PolicyDecision> deciding() {
		return this.decisions.stream().min(MOST_RESTRICTIVE);
	}

	/**
	 * How long to wait before the same request can be admitted: the longest wait of the denying policies, zero when
	 * admitted.
	 * @return the wait
	 */
	public Duration retryAfter() {
		return this.decisions.stream().map(PolicyDecision::retryAfter).max(Comparator.naturalOrder()).orElse(Duration.ZERO);
	}

	/**
	 * The concurrency permits this request holds; {@link Permit#NONE} when it holds none (also when denied).
	 * @return the permit to release when the request completes
	 */
	public Permit permit() {
		return this.permit;
	}

	/**
	 * Gives back everything this admitted request took from every policy, as if it had not been made: for when a
	 * later check of the same request (say, a method's own policies after the filter's) denies it. Concurrency
	 * permits are given back too. {@link Permit#NONE} for a denied request.
	 * @return the reversal, idempotent
	 */
	public Permit reversal() {
		return this.reversal;
	}

	/**
	 * This decision as it stands once {@link #reversal()} has given everything back: each policy's remaining
	 * includes this request's cost again. For the headers of a request denied by a later check.
	 * @return the reversed view, holding no permits
	 */
	public RateLimitDecision reversed() {
		return new RateLimitDecision(this.reversedDecisions.get(), Permit.NONE, Permit.NONE,
				this.reversedDecisions, this.failure);
	}

	/**
	 * Several decisions of one request (say a filter's and a method's) as one, for the headers: all their policies,
	 * admitted only when each was. The result holds no permits.
	 * @param decisions the decisions
	 * @return the merged decision
	 */
	public static RateLimitDecision merge(List<RateLimitDecision> decisions) {
		if (decisions.size() == 1) {
			return decisions.get(0);
		}
		List<PolicyDecision> all = new ArrayList<>();
		decisions.forEach((decision) -> all.addAll(decision.allDecisions()));
		return new RateLimitDecision(all, Permit.NONE);
	}

	/**
	 * The decision to report when a later check denies a request that earlier checks admitted: the earlier
	 * decisions as they stand once given back ({@link #reversed()}), with the denying one.
	 * @param earlier the request's earlier decisions, whose reversal the caller releases
	 * @param denying the denying decision
	 * @return the merged decision for the headers and the rejection
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
