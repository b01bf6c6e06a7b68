package io.github.ratelimit.spring.servlet;

import java.io.IOException;
import java.util.List;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.Waits;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.cors.CorsUtils;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Checks the filter rules' policies of each request in one call (admitted: the headers; denied, or a
 * {@link RateLimitExceededException} reaching it: the rejection) and releases every permit the request holds when
 * its response completes, asynchronous ones included. An error dispatch only gets the headers back.
 */
public final class RateLimitFilter extends OncePerRequestFilter {

	/** The default order of both filters: after Spring Security's ({@code -100}), so principal keys see the user. */
	public static final int DEFAULT_ORDER = -90;

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	public RateLimitFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
		this.enforcer = enforcer;
		this.responses = responses;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getDispatcherType() == DispatcherType.ERROR) {
			doFilterNestedErrorDispatch(request, response, chain);
			return;
		}
		RequestScope scope = RequestScope.of(request);
		scope.ownRelease();
		try {
			RateLimitExceededException denied = admit(scope, request, response);
			if (denied != null) {
				throw denied;
			}
			chain.doFilter(request, response);
		}
		catch (RateLimitExceededException ex) {
			if (response.isCommitted()) {
				throw ex;
			}
			Waits.await(scope.reverseAdmitted());
			RequestScope.write(response, this.responses.reject(ex.decision(), scope.request()));
		}
		finally {
			scope.releaseWhenComplete();
		}
	}

	/** An error dispatch is not checked again, but gets the admitted headers back (the container reset them). */
	@Override
	protected void doFilterNestedErrorDispatch(HttpServletRequest request, HttpServletResponse response,
			FilterChain chain) throws ServletException, IOException {
		RequestScope scope = RequestScope.find(request);
		if (scope != null && !scope.admitted().isEmpty() && !response.isCommitted()) {
			RequestScope.setHeaders(response, this.responses, RateLimitDecision.merge(scope.admitted()));
		}
		chain.doFilter(request, response);
	}

	/** Checks the rules' policies: admitted, the headers and null; denied, the denial. */
	private @Nullable RateLimitExceededException admit(RequestScope scope, HttpServletRequest request,
			HttpServletResponse response) {
		if (CorsUtils.isPreFlightRequest(request)) {
			return null; // a browser's CORS preflight is not the client's request: it takes no quota
		}
		List<RateLimitEnforcer.Target> targets = this.enforcer.ruleTargets(request.getMethod(), scope.request().parsedPath());
		if (targets.isEmpty()) {
			return null;
		}
		return scope.awaitAdmission(this.enforcer, scope.request(), targets, null, null,
				(admitted) -> RequestScope.setHeaders(response, this.responses, admitted));
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return true;
	}

	@Override
	protected boolean shouldNotFilterErrorDispatch() {
		return false; // not checked again: only the headers are put back (doFilterInternal)
	}

}
