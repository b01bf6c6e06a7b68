package io.github.ratelimit.spring.servlet;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.RequestContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * What the rate limiter knows of one servlet request: its {@link RequestContext}, the decisions made for it (the
 * filter rules', then the {@code @RateLimited} methods') and the concurrency permits it holds. The servlet mirror
 * of the reactive side's exchange scope: found under one internal request attribute, opened by the first of the
 * {@link RateLimitFilter} and the {@link ServletRateLimitedMethodInterceptor} to need it.
 */
final class RequestScope {

	private static final Log logger = LogFactory.getLog(RequestScope.class);

	/** The request attribute under which the scope is found. */
	private static final String KEY = RequestScope.class.getName();

	private final HttpServletRequest request;

	private final RequestContext context;

	private final List<RateLimitDecision> decisions = new CopyOnWriteArrayList<>();

	private final List<Permit> permits = new CopyOnWriteArrayList<>();

	/**
	 * Whether the {@link RateLimitFilter} releases the permits (else the {@link PermitReleaseHandlerInterceptor}
	 * does).
	 */
	private volatile boolean filterOwned;

	/** Whether a releasing {@link AsyncListener} is registered. */
	private boolean listening;

	private RequestScope(HttpServletRequest request) {
		this.request = request;
		this.context = new ServletRequestContext(request);
	}

	/**
	 * The scope of a request, opened when absent.
	 * @param request the request
	 * @return its scope
	 */
	static RequestScope of(HttpServletRequest request) {
		RequestScope scope = find(request);
		if (scope == null) {
			scope = new RequestScope(request);
			request.setAttribute(KEY, scope);
		}
		return scope;
	}

	/**
	 * The scope of a request, if one was opened.
	 * @param request the request
	 * @return its scope, or null
	 */
	static @Nullable RequestScope find(ServletRequest request) {
		return (request.getAttribute(KEY) instanceof RequestScope scope) ? scope : null;
	}

	RequestContext request() {
		return this.context;
	}

	/** Marks that the {@link RateLimitFilter} releases the permits of this request when its response completes. */
	void ownRelease() {
		this.filterOwned = true;
	}

	boolean isFilterOwned() {
		return this.filterOwned;
	}

	/**
	 * Checks targets for this request, blocking, and records the decision.
	 * @param enforcer the enforcer
	 * @param targets the policies
	 * @param method the rate-limited method, or null in the filter
	 * @param args its arguments, or null
	 * @return the decision
	 */
	RateLimitDecision check(RateLimitEnforcer enforcer, List<RateLimitEnforcer.Target> targets,
			@Nullable Method method, @Nullable Object @Nullable [] args) {
		RateLimitDecision decision = enforcer.check(this.context, targets, method, args);
		record(decision);
		return decision;
	}

	/**
	 * Records a decision of this request, and its permit when it holds one.
	 * @param decision the decision
	 */
	void record(RateLimitDecision decision) {
		this.decisions.add(decision);
		if (decision.permit().holdsAny()) {
			this.permits.add(decision.permit());
		}
	}

	/**
	 * The decisions made so far for the request, admitted or not.
	 * @return a snapshot
	 */
	List<RateLimitDecision> decisions() {
		return List.copyOf(this.decisions);
	}

	/**
	 * The admitted decisions made so far for the request: what its response reports, and what a denial gives back.
	 * @return a snapshot
	 */
	List<RateLimitDecision> admitted() {
		return this.decisions.stream().filter(RateLimitDecision::allowed).toList();
	}

	/**
	 * The permits the request holds, released when its response completes.
	 * @return the live list
	 */
	List<Permit> permits() {
		return this.permits;
	}

	/**
	 * Gives back what the request's admitted decisions took (idempotent per decision): called when a denial becomes
	 * the 429 response, so a denied request uses up no quota.
	 */
	void reverseAdmitted() {
		for (RateLimitDecision decision : admitted()) {
			try {
				decision.reversal().release();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not give back the quota a denied request's earlier checks took", ex);
			}
		}
	}

	/**
	 * Releases the permits of the request once its response is complete: at once when the request is synchronous,
	 * else when its asynchronous processing completes, fails or times out.
	 */
	void releaseWhenComplete() {
		if (this.request.isAsyncStarted()) {
			if (!this.listening) {
				this.listening = true;
				this.request.getAsyncContext().addListener(new ReleasingAsyncListener(this.permits));
			}
		}
		else {
			release(this.permits);
		}
	}

	/**
	 * Releases permits, each once ({@link Permit#release()} is idempotent). A failure is logged, not thrown: the
	 * backend reclaims a permit that is never released after its policy's window.
	 */
	private static void release(List<Permit> permits) {
		for (Permit permit : permits) {
			try {
				permit.release();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release rate-limit permits; they are reclaimed after the policy's window", ex);
			}
		}
	}

	/**
	 * Sets headers on a response, replacing values of the same name.
	 * @param response the response
	 * @param headers the headers
	 */
	static void setHeaders(HttpServletResponse response, HttpHeaders headers) {
		headers.forEach((name, values) -> {
			for (int i = 0; i < values.size(); i++) {
				if (i == 0) {
					response.setHeader(name, values.get(i));
				}
				else {
					response.addHeader(name, values.get(i));
				}
			}
		});
	}

	/**
	 * Writes a rejection: status, headers (replacing those of the same name) and body, in place of anything
	 * buffered so far. A response that is already committed (by an earlier filter) cannot be changed and is left
	 * as it is.
	 * @param response the response
	 * @param rejection the rejection
	 * @throws IOException when the body cannot be written
	 */
	static void write(HttpServletResponse response, Rejection rejection) throws IOException {
		if (response.isCommitted()) {
			logger.debug("Response already committed: cannot write the rate-limit rejection");
			return;
		}
		response.resetBuffer();
		response.setStatus(rejection.status());
		setHeaders(response, rejection.headers());
		response.setContentLength(rejection.body().length);
		if (rejection.body().length > 0) {
			response.getOutputStream().write(rejection.body());
		}
		response.flushBuffer();
	}

	/**
	 * Releases the permits when an asynchronous request completes, fails or times out, whichever comes first
	 * (and again, without effect, for the others). Registers itself again when the request starts a new
	 * asynchronous cycle, since the container drops the listeners of the previous one.
	 */
	private static final class ReleasingAsyncListener implements AsyncListener {

		private final List<Permit> permits;

		ReleasingAsyncListener(List<Permit> permits) {
			this.permits = permits;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			release(this.permits);
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			release(this.permits);
		}

		@Override
		public void onError(AsyncEvent event) {
			release(this.permits);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this);
		}

	}

}
