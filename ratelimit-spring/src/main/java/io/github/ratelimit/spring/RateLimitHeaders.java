package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.StringJoiner;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate-limit headers of a decision:
 * <ul>
 * <li>{@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (epoch seconds) for the
 * most restrictive policy;</li>
 * <li>{@code RateLimit-Policy} ({@code "<name>";q=<limit>;w=<window seconds>} per policy) and {@code RateLimit}
 * ({@code "<name>";r=<remaining>;t=<seconds>} per policy), Structured Field lists as in
 * draft-ietf-httpapi-ratelimit-headers-10;</li>
 * <li>{@code Retry-After} in whole seconds on denial, rounded up and never earlier than any denying policy's
 * {@code t}.</li>
 * </ul>
 * For a policy that denies, {@code t} is the time until it admits the request again; otherwise the time until its
 * quota is fully restored.
 * <p>
 * Only decisions with figures are reported: a policy that failed open or closed because the backend was unavailable
 * claims no quota it could not check (it has no {@code RateLimit} entry, and never sets {@code X-RateLimit-*}). A
 * policy decided by the local fallback reports that instance's figures.
 *
 * @param legacy whether to write the {@code X-RateLimit-*} headers
 * @param standard whether to write {@code RateLimit} and {@code RateLimit-Policy}
 * @param retryAfter whether to write {@code Retry-After} on denial
 */
public record RateLimitHeaders(boolean legacy, boolean standard, boolean retryAfter) {

	public static final String X_LIMIT = "X-RateLimit-Limit";

	public static final String X_REMAINING = "X-RateLimit-Remaining";

	public static final String X_RESET = "X-RateLimit-Reset";

	public static final String RATELIMIT = "RateLimit";

	public static final String RATELIMIT_POLICY = "RateLimit-Policy";

	/** All header groups on. */
	public static final RateLimitHeaders ALL = new RateLimitHeaders(true, true, true);

	/**
	 * The headers of a decision.
	 * @param decision the decision (no headers when no policy applied)
	 * @param nowMillis the current time, for {@code X-RateLimit-Reset}
	 * @return the headers
	 */
	public HttpHeaders of(RateLimitDecision decision, long nowMillis) {
		HttpHeaders headers = new HttpHeaders();
		if (decision.decisions().stream().anyMatch(MissingKey::isDenial)) {
			return headers; // refused for a missing key: a client error, no quota to report, nothing to wait for
		}
		RateLimitDecision reported = decision.degraded() ? withFigures(decision) : decision;
		PolicyDecision deciding = reported.deciding().orElse(null);
		if (this.legacy && deciding != null) {
			headers.set(X_LIMIT, Long.toString(deciding.limit()));
			headers.set(X_REMAINING, Long.toString(deciding.remaining()));
			headers.set(X_RESET, Long.toString(ceilSeconds(Duration.ofMillis(nowMillis).plus(resetOf(deciding)))));
		}
		if (this.standard && deciding != null) {
			StringJoiner policies = new StringJoiner(", ");
			StringJoiner limits = new StringJoiner(", ");
			for (PolicyDecision policy : reported.decisions()) {
				String name = quoted(policy.policy().name());
				policies.add(name + ";q=" + policy.limit() + ";w=" + ceilSeconds(policy.policy().window()));
				limits.add(name + ";r=" + policy.remaining() + ";t=" + ceilSeconds(resetOf(policy)));
			}
			headers.set(RATELIMIT_POLICY, policies.toString());
			headers.set(RATELIMIT, limits.toString());
		}
		if (this.retryAfter && !decision.allowed()) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds(decision)));
		}
		return headers;
	}

	private static RateLimitDecision withFigures(RateLimitDecision decision) {
		return new RateLimitDecision(
				decision.decisions().stream().filter((policy) -> policy.enforcement().hasFigures()).toList(),
				Permit.NONE);
	}

	/**
	 * The {@code Retry-After} of a denial in whole seconds: the longest wait of the denying policies, rounded up.
	 * @param decision the decision
	 * @return the seconds, at least 1 for a denial
	 */
	public static long retryAfterSeconds(RateLimitDecision decision) {
		return Math.max(1, ceilSeconds(decision.retryAfter()));
	}

	private static Duration resetOf(PolicyDecision decision) {
		return decision.allowed() ? decision.resetAfter() : decision.retryAfter();
	}

	static long ceilSeconds(Duration duration) {
		long seconds = duration.getSeconds();
		return (duration.getNano() > 0) ? seconds + 1 : seconds;
	}

	/** A Structured Field string; policy names are validated to plain characters, this escapes anyway. */
	private static String quoted(String value) {
		return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
	}

}
