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
 * What the rate limiter knows of one servlet request, under one request attribute: its context, the decisions made
 * for it and the permits it holds (the mirror of the reactive side's exchange scope). As the listener of an
 * asynchronous request it releases them when the request completes, fails or times out, and registers again for a
 * new asynchronous cycle (the container drops the previous one's listeners).
 */
final class RequestScope implements AsyncListener {

	private static final Log logger = LogFactory.getLog(RequestScope.class);

	private static final String KEY = RequestScope.class.getName();

	private final HttpServletRequest request;

	private final RequestContext context;

	private final List<RateLimitDecision> decisions = new CopyOnWriteArrayList<>();

	private final List<Permit> permits = new CopyOnWriteArrayList<>();

	/** Whether the {@link RateLimitFilter} releases the permits (else the {@link PermitReleaseHandlerInterceptor}). */
	private volatile boolean filterOwned;

	/** Whether this scope listens to the asynchronous request. */
	private boolean listening;

	private RequestScope(HttpServletRequest request) {
		this.request = request;
		this.context = new ServletRequestContext(request);
	}

	/** The scope of a request, opened when absent. */
	static RequestScope of(HttpServletRequest request) {
		RequestScope scope = find(request);
		if (scope == null) {
			scope = new RequestScope(request);
			request.setAttribute(KEY, scope);
		}
		return scope;
	}

	/** The scope of a request, or null if none was opened. */
	static @Nullable RequestScope find(ServletRequest request) {
		return (request.getAttribute(KEY) instanceof RequestScope scope) ? scope : null;
	}

	RequestContext request() {
		return this.context;
	}

	void ownRelease() {
		this.filterOwned = true;
	}

	boolean isFilterOwned() {
		return this.filterOwned;
	}

	/** Checks targets for this request (method and arguments null in the filter) and records the decision. */
	RateLimitDecision check(RateLimitEnforcer enforcer, List<RateLimitEnforcer.Target> targets,
			@Nullable Method method, @Nullable Object @Nullable [] args) {
		RateLimitDecision decision = enforcer.check(this.context, targets, method, args);
		record(decision);
		return decision;
	}

	/** Records a decision of this request, and its permit when it holds one. */
	void record(RateLimitDecision decision) {
		this.decisions.add(decision);
		if (decision.permit().holdsAny()) {
			this.permits.add(decision.permit());
		}
	}

	/** A snapshot of the decisions made so far, admitted or not. */
	List<RateLimitDecision> decisions() {
		return List.copyOf(this.decisions);
	}

	/** A snapshot of the admitted decisions: what the response reports, and what a denial gives back. */
	List<RateLimitDecision> admitted() {
		return this.decisions.stream().filter(RateLimitDecision::allowed).toList();
	}

	/** The live list of the permits the request holds. */
	List<Permit> permits() {
		return this.permits;
	}

	/** Gives back what the admitted decisions took (once each) when a denial becomes the 429 response. */
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

	/** Releases the permits at once for a synchronous request, else when its asynchronous processing ends. */
	void releaseWhenComplete() {
		if (this.request.isAsyncStarted()) {
			if (!this.listening) {
				this.listening = true;
				this.request.getAsyncContext().addListener(this);
			}
		}
		else {
			release();
		}
	}

	/** A failure is logged, not thrown: the backend reclaims an unreleased permit after its policy's window. */
	private void release() {
		for (Permit permit : this.permits) {
			try {
				permit.release();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release rate-limit permits; they are reclaimed after the policy's window", ex);
			}
		}
	}

	/** Sets headers on a response, replacing values of the same name. */
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

	/** Writes a rejection in place of anything buffered; a committed response is left as it is. */
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

	@Override
	public void onComplete(AsyncEvent event) {
		release();
	}

	@Override
	public void onTimeout(AsyncEvent event) {
		release();
	}

	@Override
	public void onError(AsyncEvent event) {
		release();
	}

	@Override
	public void onStartAsync(AsyncEvent event) {
		event.getAsyncContext().addListener(this);
	}

}
