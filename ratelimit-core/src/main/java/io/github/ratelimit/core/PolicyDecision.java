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
 * admitted, before it otherwise
 * @param resetAfter how long until the policy's quota for this identity is fully restored
 * @param retryAfter when {@code allowed} is false, how long until this policy would admit the same request; zero
 * otherwise
 */
public record PolicyDecision(RateLimitPolicy policy, String identity, boolean allowed, long remaining,
		Duration resetAfter, Duration retryAfter) {

	public PolicyDecision {
		Objects.requireNonNull(policy, "policy");
		Objects.requireNonNull(identity, "identity");
		Objects.requireNonNull(resetAfter, "resetAfter");
		Objects.requireNonNull(retryAfter, "retryAfter");
	}

	/**
	 * Builds a decision from the backends' raw microsecond figures.
	 * @param entry the request entry
	 * @param allowed whether the policy admits
	 * @param remaining the remaining quota
	 * @param resetAfterMicros microseconds until the quota is full again
	 * @param retryAfterMicros microseconds until a retry can succeed
	 * @return the decision
	 */
	public static PolicyDecision of(RateLimitRequest.Entry entry, boolean allowed, long remaining,
			long resetAfterMicros, long retryAfterMicros) {
		return new PolicyDecision(entry.policy(), entry.identity(), allowed, Math.max(0, remaining),
				micros(resetAfterMicros), allowed ? Duration.ZERO : micros(retryAfterMicros));
	}

	private static Duration micros(long micros) {
		return Duration.of(Math.max(0, micros), ChronoUnit.MICROS);
	}

	/**
	 * The policy's limit.
	 * @return the limit
	 */
	public long limit() {
		return this.policy.limit();
	}

}
