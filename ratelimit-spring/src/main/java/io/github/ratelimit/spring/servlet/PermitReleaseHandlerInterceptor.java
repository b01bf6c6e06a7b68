package io.github.ratelimit.spring.servlet;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.AsyncHandlerInterceptor;

/** Releases the permits of rate-limited handlers when the request completes, if no {@link RateLimitFilter} does. */
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
