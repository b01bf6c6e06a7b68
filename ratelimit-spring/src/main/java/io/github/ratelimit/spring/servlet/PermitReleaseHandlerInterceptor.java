package io.github.ratelimit.spring.servlet;

import io.github.ratelimit.spring.RateLimitEnforcer;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.AsyncHandlerInterceptor;

/**
 * Releases the concurrency permits that {@link io.github.ratelimit.spring.RateLimited} handler methods took when
 * the request has no {@link RateLimitFilter} (disabled with {@code ratelimit.filter.enabled=false} or not
 * registered): after the handler completes, or, for an asynchronous handler, when the asynchronous request
 * completes, fails or times out. With the filter in the chain it does nothing: the filter releases them.
 * Register it for all handlers (e.g. as a {@link org.springframework.web.servlet.handler.MappedInterceptor}).
 */
public final class PermitReleaseHandlerInterceptor implements AsyncHandlerInterceptor {

	@Override
	public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable Exception ex) {
		RequestScope scope = RequestScope.find(request);
		if (scope != null && !scope.isFilterOwned()) {
			scope.releaseWhenComplete();
		}
	}

	@Override
	public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response,
			Object handler) {
		RequestScope scope = RequestScope.find(request);
		if (scope != null && !scope.isFilterOwned()) {
			scope.releaseWhenComplete();
		}
	}

}
