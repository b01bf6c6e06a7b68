package io.github.ratelimit.spring.servlet;

import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import jakarta.servlet.http.HttpServletResponse;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Checks a rate-limited method when it is called in the thread's request (admitted: the headers; denied: it throws);
 * calls outside a request, or that may wait, go to the {@link RateLimitedCallInterceptor}.
 */
final class ServletRateLimitedMethodInterceptor implements MethodInterceptor {

	private final Supplier<RateLimitEnforcer> enforcer;

	private final Supplier<RateLimitResponses> responses;

	private final RateLimitedCallInterceptor calls;

	/** Looks the enforcer and the responses up on first use: it is created before them. */
	ServletRateLimitedMethodInterceptor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, RateLimitedCallInterceptor calls) {
		this.enforcer = SingletonSupplier.of(enforcer);
		this.responses = SingletonSupplier.of(responses);
		this.calls = calls;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		if (!(RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet)) {
			return this.calls.invoke(invocation);
		}
		List<RateLimitEnforcer.Target> targets = this.calls.targets(invocation);
		if (targets.isEmpty()) {
			return invocation.proceed();
		}
		RequestScope scope = RequestScope.of(servlet.getRequest());
		if (this.calls.waits(invocation)) {
			return this.calls.invoke(invocation, scope.request());
		}
		HttpServletResponse response = servlet.getResponse();
		RateLimitExceededException denied = scope.awaitAdmission(this.enforcer.get(),
				scope.request(), targets, invocation.getMethod(), invocation.getArguments(), (admitted) -> {
					if (response != null && !response.isCommitted()) {
						RequestScope.setHeaders(response, this.responses.get(), admitted);
					}
				});
		if (denied != null) {
			throw denied;
		}
		return invocation.proceed();
	}

}
