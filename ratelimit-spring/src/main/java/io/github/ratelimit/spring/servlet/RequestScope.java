package io.github.ratelimit.spring.servlet;

import java.io.IOException;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.Waits;
import io.github.ratelimit.spring.DecisionScope;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.Rejection;
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
 * The {@link DecisionScope} of one servlet request, under one request attribute. As the listener of an asynchronous
 * request it releases the permits when it ends, registering again for each new cycle (the container drops it).
 */
final class RequestScope extends DecisionScope implements AsyncListener {

	private static final Log logger = LogFactory.getLog(RequestScope.class);

	private static final String KEY = RequestScope.class.getName();

	private final HttpServletRequest request;

	private final ServletRequestContext context;

	/** Whether the {@link RateLimitFilter} releases the permits (else the {@link PermitReleaseHandlerInterceptor}). */
	private volatile boolean filterOwned;

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

	ServletRequestContext request() {
		return this.context;
	}

	void ownRelease() {
		this.filterOwned = true;
	}

	boolean isFilterOwned() {
		return this.filterOwned;
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
			// an interrupted request thread must not cancel the release (a concurrency slot would stay held)
			Waits.awaitRelease(close());
		}
	}

	/** Sets the rate-limit headers of an admitted decision on a response, replacing values of the same name. */
	static void setHeaders(HttpServletResponse response, RateLimitResponses responses, RateLimitDecision admitted) {
		responses.writeHeaders(admitted, response::setHeader);
	}

	/** Sets headers on a response, replacing values of the same name. */
	static void setHeaders(HttpServletResponse response, HttpHeaders headers) {
		headers.forEach((name, values) -> {
			response.setHeader(name, values.get(0));
			values.stream().skip(1).forEach((value) -> response.addHeader(name, value));
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
		Waits.awaitRelease(close());
	}

	@Override
	public void onTimeout(AsyncEvent event) {
		Waits.awaitRelease(close());
	}

	@Override
	public void onError(AsyncEvent event) {
		Waits.awaitRelease(close());
	}

	@Override
	public void onStartAsync(AsyncEvent event) {
		event.getAsyncContext().addListener(this);
	}

}
