package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

/**
 * The default rejection: status 429 and an RFC 9457 {@code application/problem+json} body with {@code type} (by
 * default {@value #QUOTA_EXCEEDED} of draft-ietf-httpapi-ratelimit-headers-10; {@code about:blank} or a type of your
 * own on request), {@code title}, {@code status}, {@code detail}, {@code instance}, the draft's
 * {@code violated-policies} (the names of the denying policies, as in {@code RateLimit-Policy}), the violated
 * {@code policies} (name, limit, remaining, window and retry-after in seconds) and {@code retryAfter} in seconds.
 * <p>
 * A request refused because the rate-limit backend is unavailable and a policy fails closed is not the client's
 * fault: it gets 503 with the problem type {@value #TEMPORARY_REDUCED_CAPACITY} of draft-ietf-httpapi-ratelimit-
 * headers-10, a {@code Retry-After} of when the backend is tried again, and the refusing {@code policies} (name and
 * retry-after only: there are no figures to report).
 */
public final class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

	/** The problem type of a refusal while the rate-limit backend is unavailable. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/** The problem type of a denial by a quota policy, from draft-ietf-httpapi-ratelimit-headers-10. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	private static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	private final String type;

	/**
	 * A handler with problem type {@value #QUOTA_EXCEEDED}.
	 */
	public ProblemDetailRejectionHandler() {
		this(QUOTA_EXCEEDED);
	}

	/**
	 * A handler with a problem type URI of your own.
	 * @param type the problem type
	 */
	public ProblemDetailRejectionHandler(String type) {
		this.type = type;
	}

	@Override
	public Rejection reject(RateLimitDecision decision, RequestContext request, HttpHeaders rateLimitHeaders) {
		if (decision.failedClosed()) {
			return unavailable(decision, request, rateLimitHeaders);
		}
		List<PolicyDecision> missing = decision.decisions().stream().filter(MissingKey::isDenial).toList();
		if (!missing.isEmpty()) {
			return missingKey(missing, request, rateLimitHeaders);
		}
		List<PolicyDecision> violated = decision.decisions().stream().filter((d) -> !d.allowed()).toList();
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision);
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":").append(string(this.type));
		json.append(",\"title\":").append(string(QUOTA_EXCEEDED.equals(this.type) ? QUOTA_EXCEEDED_TITLE
				: HttpStatus.TOO_MANY_REQUESTS.getReasonPhrase()));
		json.append(",\"status\":").append(HttpStatus.TOO_MANY_REQUESTS.value());
		json.append(",\"detail\":").append(string(detail(violated, retryAfter)));
		json.append(",\"instance\":").append(string(request.requestPath()));
		json.append(",\"violated-policies\":[");
		for (int i = 0; i < violated.size(); i++) {
			json.append((i > 0) ? "," : "").append(string(violated.get(i).policy().name()));
		}
		json.append("],\"policies\":[");
		for (int i = 0; i < violated.size(); i++) {
			PolicyDecision policy = violated.get(i);
			json.append((i > 0) ? "," : "")
				.append("{\"name\":")
				.append(string(policy.policy().name()))
				.append(",\"limit\":")
				.append(policy.limit())
				.append(",\"remaining\":")
				.append(RateLimitHeaders.remainingOf(policy))
				.append(",\"window\":")
				.append(RateLimitHeaders.ceilSeconds(policy.policy().window()))
				.append(",\"retryAfter\":")
				.append(RateLimitHeaders.ceilSeconds(policy.retryAfter()))
				.append('}');
		}
		json.append("],\"retryAfter\":").append(retryAfter).append('}');
		HttpHeaders headers = new HttpHeaders();
		headers.addAll(rateLimitHeaders);
		headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return new Rejection(HttpStatus.TOO_MANY_REQUESTS.value(), headers,
				json.toString().getBytes(StandardCharsets.UTF_8));
	}

	private Rejection unavailable(RateLimitDecision decision, RequestContext request, HttpHeaders rateLimitHeaders) {
		List<PolicyDecision> refusing = decision.decisions()
			.stream()
			.filter((d) -> d.enforcement() == Enforcement.FAILED_CLOSED)
			.toList();
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision);
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":").append(string(TEMPORARY_REDUCED_CAPACITY));
		json.append(",\"title\":").append(string("Temporarily Reduced Capacity"));
		json.append(",\"status\":").append(HttpStatus.SERVICE_UNAVAILABLE.value());
		json.append(",\"detail\":")
			.append(string("Rate limits cannot be checked right now (" + names(refusing) + "). Retry after "
					+ retryAfter + " second" + ((retryAfter == 1) ? "" : "s") + "."));
		json.append(",\"instance\":").append(string(request.requestPath()));
		json.append(",\"policies\":[");
		for (int i = 0; i < refusing.size(); i++) {
			json.append((i > 0) ? "," : "")
				.append("{\"name\":")
				.append(string(refusing.get(i).policy().name()))
				.append(",\"retryAfter\":")
				.append(RateLimitHeaders.ceilSeconds(refusing.get(i).retryAfter()))
				.append('}');
		}
		json.append("],\"retryAfter\":").append(retryAfter).append('}');
		HttpHeaders headers = new HttpHeaders();
		headers.addAll(rateLimitHeaders);
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return new Rejection(HttpStatus.SERVICE_UNAVAILABLE.value(), headers,
				json.toString().getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * A request refused because it has no key (missing-key: deny): 401 when the missing key is the principal, else
	 * 400 naming the key; never a 429, never a {@code Retry-After}.
	 */
	private static Rejection missingKey(List<PolicyDecision> missing, RequestContext request,
			HttpHeaders rateLimitHeaders) {
		boolean unauthenticated = missing.stream().anyMatch((d) -> "principal".equals(MissingKey.source(d)));
		HttpStatus status = unauthenticated ? HttpStatus.UNAUTHORIZED : HttpStatus.BAD_REQUEST;
		StringBuilder keys = new StringBuilder();
		for (PolicyDecision policy : missing) {
			keys.append((keys.length() > 0) ? ", " : "").append(MissingKey.source(policy));
		}
		String detail = unauthenticated ? "Authentication is required (" + names(missing) + ")."
				: "The request has no rate-limit key (" + keys + ") that " + names(missing) + " require"
						+ ((missing.size() == 1) ? "s" : "") + ".";
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":\"about:blank\"");
		json.append(",\"title\":").append(string(status.getReasonPhrase()));
		json.append(",\"status\":").append(status.value());
		json.append(",\"detail\":").append(string(detail));
		json.append(",\"instance\":").append(string(request.requestPath())).append('}');
		HttpHeaders headers = new HttpHeaders();
		headers.addAll(rateLimitHeaders);
		headers.remove(HttpHeaders.RETRY_AFTER);
		headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return new Rejection(status.value(), headers, json.toString().getBytes(StandardCharsets.UTF_8));
	}

	private static String names(List<PolicyDecision> decisions) {
		StringBuilder names = new StringBuilder();
		for (PolicyDecision policy : decisions) {
			names.append((names.length() > 0) ? ", " : "").append('\'').append(policy.policy().name()).append('\'');
		}
		return names.toString();
	}

	private static String detail(List<PolicyDecision> violated, long retryAfter) {
		return "Rate limit exceeded (" + names(violated) + "). Retry after " + retryAfter + " second"
				+ ((retryAfter == 1) ? "" : "s") + ".";
	}

	/** A JSON string literal; escapes quotes, backslashes and control characters. */
	static String string(String value) {
		StringBuilder out = new StringBuilder(value.length() + 2).append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				case '\r' -> out.append("\\r");
				case '\t' -> out.append("\\t");
				default -> {
					if (c < 0x20 || c == '\u2028' || c == '\u2029') {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		return out.append('"').toString();
	}

}
