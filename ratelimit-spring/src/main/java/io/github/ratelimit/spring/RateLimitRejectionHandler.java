package io.github.ratelimit.spring;

import io.github.ratelimit.core.RateLimitDecision;

import org.springframework.http.HttpHeaders;

/** Turns a denial into a response. Declare a bean of this type to replace the default RFC 9457 problem response. */
@FunctionalInterface
public interface RateLimitRejectionHandler {

	/** The response to a denying decision (all policies evaluated), with its rate-limit headers (as enabled). */
	Rejection reject(RateLimitDecision decision, RequestContext request, HttpHeaders rateLimitHeaders);

}
