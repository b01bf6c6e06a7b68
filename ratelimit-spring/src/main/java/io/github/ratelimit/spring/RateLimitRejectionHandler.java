package io.github.ratelimit.spring;

import io.github.ratelimit.core.RateLimitDecision;

import org.springframework.http.HttpHeaders;

/** Turns a denial into a response. Declare a bean of this type to replace the default RFC 9457 problem response. */
@FunctionalInterface
public interface RateLimitRejectionHandler {

	/**
	 * @param decision the denying decision (all policies evaluated for the request)
	 * @param rateLimitHeaders the rate-limit headers of the decision (as enabled), to include in the response
	 * @return the response
	 */
	Rejection reject(RateLimitDecision decision, RequestContext request, HttpHeaders rateLimitHeaders);

}
