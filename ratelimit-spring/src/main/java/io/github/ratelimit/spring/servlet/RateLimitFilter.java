package io.github.ratelimit.spring.servlet;

import java.io.IOException;
import java.util.List;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.cors.CorsUtils;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Applies the filter rules ({@code ratelimit.filter.rules}) to every request and releases the request's concurrency
 * permits when its response completes.
 * <p>
 * For a request that rules match, all their policies are checked in one call: an admitted decision and its permit
 * are recorded in the request's scope, and the rate-limit headers are set on the response. A denied request
 * gets the rejection (429 with a problem body by default) and goes no further.
 * <p>
 * Every request, matched or not, has its permits released when the response completes, including those that
 * {@link io.github.ratelimit.spring.RateLimited} methods take later in the chain: right after the chain for a
 * synchronous request (also when it throws), and through an {@link jakarta.servlet.AsyncListener} for an
 * asynchronous one ({@code Callable}, {@code DeferredResult}, {@code SseEmitter}, {@code StreamingResponseBody},
 * ...) on completion, error or timeout. The filter checks once per request: asynchronous dispatches pass through
 * ({@link #shouldNotFilterAsyncDispatch()} stays true), and an error dispatch (the container's error page, Spring
 * Boot's {@code /error}) is not checked again but gets the rate-limit headers of the request's admitted decisions
 * back, since the container resets the response before it.
 * <p>
 * A {@link RateLimitExceededException} that reaches the filter (a {@code RateLimited} method called outside Spring
 * MVC's exception handling) is turned into the rejection as well, as long as the response is not committed.
 */
public final class RateLimitFilter extends OncePerRequestFilter {

	/**
	 * The default order of the servlet and the WebFlux filter: just after Spring Security's filter chain
	 * ({@code -100}), so that principal keys see the authenticated user.
	 */
	public static final int DEFAULT_ORDER = -90;

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	/**
	 * A filter.
	 * @param enforcer decides requests
	 * @param responses renders the headers and rejections
	 */
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
			if (admit(scope, request, response)) {
				chain.doFilter(request, response);
			}
		}
		catch (RateLimitExceededException ex) {
			if (response.isCommitted()) {
				throw ex;
			}
			scope.reverseAdmitted();
			RequestScope.write(response, this.responses.reject(ex.decision(), scope.request()));
		}
		finally {
			scope.releaseWhenComplete();
		}
	}

	/**
	 * An error dispatch: not checked again, but the response gets the headers of the request's admitted decisions
	 * back (the container reset it before rendering the error).
	 */
	@Override
	protected void doFilterNestedErrorDispatch(HttpServletRequest request, HttpServletResponse response,
			FilterChain chain) throws ServletException, IOException {
		RequestScope scope = RequestScope.find(request);
		if (scope != null && !scope.admitted().isEmpty() && !response.isCommitted()) {
			RequestScope.setHeaders(response, this.responses.headers(RateLimitDecision.merge(scope.admitted())));
		}
		chain.doFilter(request, response);
	}

	private boolean admit(RequestScope scope, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		if (CorsUtils.isPreFlightRequest(request)) {
			return true; // a browser's CORS preflight is not the client's request: it takes no quota
		}
		List<RateLimitEnforcer.Target> targets = this.enforcer.ruleTargets(request.getMethod(),
				ServletRequestContext.pathWithinApplication(request));
		if (targets.isEmpty()) {
			return true;
		}
		RateLimitDecision decision = scope.check(this.enforcer, targets, null, null);
		if (!decision.allowed()) {
			RequestScope.write(response, this.responses.reject(decision, scope.request()));
			return false;
		}
		RequestScope.setHeaders(response, this.responses.headers(decision));
		return true;
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
