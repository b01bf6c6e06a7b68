package io.github.ratelimit.spring.servlet;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.AsyncHandlerInterceptor;

/**
 * Releases the permits {@link io.github.ratelimit.spring.RateLimited} handlers took when no {@link RateLimitFilter}
 * does: when the request, or its asynchronous processing, completes. Register it for all handlers.
 */
public final class PermitReleaseHandlerInterceptor implements AsyncHandlerInterceptor {

	@Override
	public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable Exception ex) {
		releaseWhenComplete(request);
	}

	@Override
	public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response,
			Object handler) {
		releaseWhenComplete(request);
	}

	private static void releaseWhenComplete(HttpServletRequest request) {
		RequestScope scope = RequestScope.find(request);
		if (scope != null && !scope.isFilterOwned()) {
			scope.releaseWhenComplete();
		}
	}

}
