package io.github.ratelimit.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * The outcome of one policy for one request.
 *
 * @param policy the policy
 * @param identity the identity it was counted for (raw, as given in the request)
 * @param allowed whether this policy admits the request
 * @param remaining requests of cost 1 this policy still admits: after this request when the whole request was
 * admitted, before it otherwise. Meaningless unless {@link Enforcement#hasFigures()}
 * @param resetAfter how long until the policy's quota for this identity is fully restored
 * @param retryAfter when {@code allowed} is false, how long until this policy would admit the same request (for a
 * {@link Enforcement#FAILED_CLOSED} refusal: until the backend is tried again); zero otherwise
 * @param enforcement whether the backend decided, or the policy's failure mode because the backend could not
 */
public record PolicyDecision(RateLimitPolicy policy, String identity, boolean allowed, long remaining,
		Duration resetAfter, Duration retryAfter, Enforcement enforcement) {

	public PolicyDecision {
		Objects.requireNonNull(policy, "policy");
		Objects.requireNonNull(identity, "identity");
		Objects.requireNonNull(resetAfter, "resetAfter");
		Objects.requireNonNull(retryAfter, "retryAfter");
		Objects.requireNonNull(enforcement, "enforcement");
	}

	/** A decision made by the backend ({@link Enforcement#ENFORCED}). */
	public PolicyDecision(RateLimitPolicy policy, String identity, boolean allowed, long remaining, Duration resetAfter,
			Duration retryAfter) {
		this(policy, identity, allowed, remaining, resetAfter, retryAfter, Enforcement.ENFORCED);
	}

	/** {@return a backend's decision of raw figures (µs): negatives read as 0, no retry-after when admitted} */
	public static PolicyDecision of(RateLimitRequest.Entry entry, boolean allowed, long remaining,
			long resetAfterMicros, long retryAfterMicros) {
		return new PolicyDecision(entry.policy(), entry.identity(), allowed, Math.max(0, remaining),
				micros(resetAfterMicros), allowed ? Duration.ZERO : micros(retryAfterMicros));
	}

	/** {@return an admission without a check, for a policy that fails open: no figures} */
	public static PolicyDecision failedOpen(RateLimitRequest.Entry entry) {
		return new PolicyDecision(entry.policy(), entry.identity(), true, entry.policy().capacity(), Duration.ZERO,
				Duration.ZERO, Enforcement.FAILED_OPEN);
	}

	/** {@return a refusal for a policy that fails closed: no figures, retry-after when the backend is tried again} */
	public static PolicyDecision failedClosed(RateLimitRequest.Entry entry, Duration retryAfter) {
		return new PolicyDecision(entry.policy(), entry.identity(), false, 0, retryAfter, retryAfter,
				Enforcement.FAILED_CLOSED);
	}

	/** {@return this decision marked {@link Enforcement#LOCAL_FALLBACK} (made by the local fallback)} */
	public PolicyDecision asLocalFallback() {
		return new PolicyDecision(this.policy, this.identity, this.allowed, this.remaining, this.resetAfter,
				this.retryAfter, Enforcement.LOCAL_FALLBACK);
	}

	private static Duration micros(long micros) {
		return Duration.of(Math.max(0, micros), ChronoUnit.MICROS);
	}

	/** {@return the policy's limit} */
	public long limit() {
		return this.policy.limit();
	}

}
