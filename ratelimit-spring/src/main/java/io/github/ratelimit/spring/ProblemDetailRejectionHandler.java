package io.github.ratelimit.spring;

import java.net.URI;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.json.ProblemDetailJacksonMixin;

/**
 * The default rejection, an RFC 9457 {@link ProblemDetail}: 429 with the violated policies' figures; 503 when a
 * policy failing closed could not be checked; 401 or 400 for a missing key.
 */
public final class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

	/** The problem type of a refusal while the rate-limit backend is unavailable. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/** The problem type of a denial by a quota policy, from draft-ietf-httpapi-ratelimit-headers-10. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	private static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	private final URI type;

	private final JsonMapper json;

	/** A handler with problem type {@value #QUOTA_EXCEEDED}. */
	public ProblemDetailRejectionHandler() {
		this(QUOTA_EXCEEDED);
	}

	/** A handler with a problem type URI of your own. */
	public ProblemDetailRejectionHandler(String type) {
		this(URI.create(type), JsonMapper.shared());
	}

	/** A handler with a problem type of your own, writing with a copy of the application's mapper (RFC order). */
	public ProblemDetailRejectionHandler(URI type, JsonMapper json) {
		this.type = type;
		this.json = json.rebuild().addMixIn(ProblemDetail.class, RfcOrder.class).propertyNamingStrategy(null).build();
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
		ProblemDetail problem = problem(HttpStatus.TOO_MANY_REQUESTS, this.type,
				"Rate limit exceeded (" + names(violated) + "). " + retryAfterText(retryAfter), request);
		if (QUOTA_EXCEEDED.equals(this.type.toString())) {
			problem.setTitle(QUOTA_EXCEEDED_TITLE);
		}
		problem.setProperty("violated-policies", violated.stream().map((d) -> d.policy().name()).toList());
		problem.setProperty("policies", violated.stream().map(Violated::of).toList());
		problem.setProperty("retryAfter", retryAfter);
		return rejection(problem, rateLimitHeaders);
	}

	private Rejection unavailable(RateLimitDecision decision, RequestContext request, HttpHeaders rateLimitHeaders) {
		List<PolicyDecision> refusing = decision.decisions()
			.stream()
			.filter((d) -> d.enforcement() == Enforcement.FAILED_CLOSED)
			.toList();
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision);
		ProblemDetail problem = problem(HttpStatus.SERVICE_UNAVAILABLE, URI.create(TEMPORARY_REDUCED_CAPACITY),
				"Rate limits cannot be checked right now (" + names(refusing) + "). " + retryAfterText(retryAfter),
				request);
		problem.setTitle("Temporarily Reduced Capacity");
		problem.setProperty("policies", refusing.stream()
			.map((d) -> new Refusing(d.policy().name(), RateLimitHeaders.ceilSeconds(d.retryAfter())))
			.toList());
		problem.setProperty("retryAfter", retryAfter);
		Rejection rejection = rejection(problem, rateLimitHeaders);
		rejection.headers().set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		return rejection;
	}

	/** A request without a key (missing-key: deny): 401 for the principal, else 400 naming the key; no Retry-After. */
	private Rejection missingKey(List<PolicyDecision> missing, RequestContext request, HttpHeaders rateLimitHeaders) {
		boolean unauthenticated = missing.stream().anyMatch((d) -> "principal".equals(MissingKey.source(d)));
		String keys = String.join(", ", missing.stream().map(MissingKey::source).toList());
		String detail = unauthenticated ? "Authentication is required (" + names(missing) + ")."
				: "The request has no rate-limit key (" + keys + ") that " + names(missing) + " require"
						+ ((missing.size() == 1) ? "s" : "") + ".";
		Rejection rejection = rejection(problem(unauthenticated ? HttpStatus.UNAUTHORIZED : HttpStatus.BAD_REQUEST,
				URI.create("about:blank"), detail, request), rateLimitHeaders);
		rejection.headers().remove(HttpHeaders.RETRY_AFTER);
		return rejection;
	}

	/** A problem whose title is its status's reason phrase. */
	private static ProblemDetail problem(HttpStatus status, URI type, String detail, RequestContext request) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(type);
		// the path as the request has it: ProblemDetail's instance is a java.net.URI, which refuses some paths
		problem.setProperty("instance", request.requestPath());
		return problem;
	}

	private Rejection rejection(ProblemDetail problem, HttpHeaders rateLimitHeaders) {
		HttpHeaders headers = HttpHeaders.copyOf(rateLimitHeaders);
		headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return new Rejection(problem.getStatus(), headers, this.json.writeValueAsBytes(problem));
	}

	private static String names(List<PolicyDecision> decisions) {
		return String.join(", ", decisions.stream().map((d) -> "'" + d.policy().name() + "'").toList());
	}

	private static String retryAfterText(long seconds) {
		return "Retry after " + seconds + " second" + ((seconds == 1) ? "" : "s") + ".";
	}

	/** ProblemDetail's members in the RFC's order, its properties after them, nothing empty. */
	@JsonInclude(JsonInclude.Include.NON_EMPTY)
	@JsonPropertyOrder({ "type", "title", "status", "detail" })
	private interface RfcOrder extends ProblemDetailJacksonMixin {

	}

	/** A violated policy's figures, in seconds. */
	private record Violated(String name, long limit, long remaining, long window, long retryAfter) {

		static Violated of(PolicyDecision decision) {
			return new Violated(decision.policy().name(), decision.limit(), RateLimitHeaders.remainingOf(decision),
					RateLimitHeaders.ceilSeconds(decision.policy().window()),
					RateLimitHeaders.ceilSeconds(decision.retryAfter()));
		}

	}

	/** A policy that failed closed: when it is tried again, in seconds. */
	private record Refusing(String name, long retryAfter) {

	}

}
