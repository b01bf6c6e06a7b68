package io.github.ratelimit.spring.servlet;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.Rejection;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.http.HttpHeaders;

/**
 * The per-request bookkeeping shared by the filter, the method interceptor and the exception resolver: the
 * decisions and permits of a request (in the request attributes named by {@link RateLimitEnforcer}), writing
 * headers and rejections, and releasing permits when the response completes.
 */
final class ServletRateLimits {

	/**
	 * Request attribute set by whoever owns the release of the request's permits (normally the
	 * {@link RateLimitFilter}), so that the {@link PermitReleaseHandlerInterceptor} fallback stays out of the way.
	 */
	static final String RELEASE_OWNER_ATTRIBUTE = ServletRateLimits.class.getName() + ".releaseOwner";

	/** Request attribute marking that a releasing {@link AsyncListener} is registered for the request. */
	static final String LISTENER_ATTRIBUTE = ServletRateLimits.class.getName() + ".listener";

	private static final Log logger = LogFactory.getLog(ServletRateLimits.class);

	private ServletRateLimits() {
	}

	/**
	 * The decisions made so far for a request, created when absent.
	 * @param request the request
	 * @return the mutable list in {@link RateLimitEnforcer#DECISIONS_ATTRIBUTE}
	 */
	@SuppressWarnings("unchecked")
	static List<RateLimitDecision> decisions(ServletRequest request) {
		Object list = request.getAttribute(RateLimitEnforcer.DECISIONS_ATTRIBUTE);
		if (list == null) {
			list = new CopyOnWriteArrayList<RateLimitDecision>();
			request.setAttribute(RateLimitEnforcer.DECISIONS_ATTRIBUTE, list);
		}
		return (List<RateLimitDecision>) list;
	}

	/**
	 * The permits a request holds, created when absent.
	 * @param request the request
	 * @return the mutable list in {@link RateLimitEnforcer#PERMITS_ATTRIBUTE}
	 */
	@SuppressWarnings("unchecked")
	static List<Permit> permits(ServletRequest request) {
		Object list = request.getAttribute(RateLimitEnforcer.PERMITS_ATTRIBUTE);
		if (list == null) {
			list = new CopyOnWriteArrayList<Permit>();
			request.setAttribute(RateLimitEnforcer.PERMITS_ATTRIBUTE, list);
		}
		return (List<Permit>) list;
	}

	/**
	 * Records a decision of a request and, when it holds concurrency permits, its permit.
	 * @param request the request
	 * @param decision the decision
	 */
	static void record(ServletRequest request, RateLimitDecision decision) {
		decisions(request).add(decision);
		if (decision.permit().holdsAny()) {
			permits(request).add(decision.permit());
		}
	}

	/**
	 * Releases the permits of a request once its response is complete: at once when the request is synchronous,
	 * else when its asynchronous processing completes, fails or times out.
	 * @param request the request, after the filter chain (or the handler) returned or threw
	 */
	/**
	 * Gives back what the request's admitted decisions took (idempotent per decision): called when a denial becomes
	 * the 429 response, so a denied request uses up no quota.
	 * @param request the request
	 */
	static void reverseAdmitted(ServletRequest request) {
		for (RateLimitDecision decision : decisions(request)) {
			if (decision.allowed()) {
				try {
					decision.reversal().release();
				}
				catch (RuntimeException ex) {
					logger.warn("Could not give back the quota a denied request's earlier checks took", ex);
				}
			}
		}
	}

	static void releaseWhenComplete(HttpServletRequest request) {
		if (request.isAsyncStarted()) {
			if (request.getAttribute(LISTENER_ATTRIBUTE) == null) {
				request.setAttribute(LISTENER_ATTRIBUTE, Boolean.TRUE);
				request.getAsyncContext().addListener(new ReleasingAsyncListener(permits(request)));
			}
		}
		else {
			release(permits(request));
		}
	}

	/**
	 * Releases permits, each once ({@link Permit#release()} is idempotent). A failure is logged, not thrown: the
	 * backend reclaims a permit that is never released after its policy's window.
	 * @param permits the permits
	 */
	static void release(List<Permit> permits) {
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
