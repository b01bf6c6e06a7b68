package io.github.ratelimit.spring.servlet;

import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Checks the {@link io.github.ratelimit.spring.RateLimited} policies of a method before it runs, in a servlet
 * application; applied by the {@link ServletRateLimitedMethodPostProcessor}.
 * <p>
 * The request is the one bound to the calling thread ({@link RequestContextHolder}). A call outside a request (a
 * scheduled task, another thread) and, within a request, a call of a bean method that may wait for its turn
 * ({@code maxWait}) are checked as bean method calls by the {@link RateLimitedCallInterceptor} (a denial throws, or
 * waits), each call once. The check happens when the method is called, before it
 * runs, so every return type works the same: plain values, {@code ResponseEntity}, {@code Callable},
 * {@code DeferredResult}, {@code SseEmitter}, {@code StreamingResponseBody}.
 * <ul>
 * <li>Admitted: the decision and its permit join the request's, and the response gets the headers of all the request's decisions
 * together (the filter rules' and the methods'), the most restrictive policy giving {@code X-RateLimit-*}. The
 * permit is released when the response completes (by the {@link RateLimitFilter}, or by the
 * {@link PermitReleaseHandlerInterceptor} without the filter).</li>
 * <li>Denied: signals the denial; when it becomes the 429, every earlier admitted decision of the request is
 * reversed, so a denied request uses up no quota of
 * the filter rules' policies, and {@link RateLimitExceededException} is thrown with all the request's decisions;
 * the {@link RateLimitExceptionResolver} turns it into the rejection.</li>
 * </ul>
 * Methods inherited from {@code Object} ({@code toString()}, ...) are never rate-limited.
 */
final class ServletRateLimitedMethodInterceptor implements MethodInterceptor {

	private final Supplier<RateLimitEnforcer> enforcer;

	private final Supplier<RateLimitResponses> responses;

	private final RateLimitedCallInterceptor calls;

	/**
	 * An interceptor.
	 * @param enforcer the enforcer
	 * @param responses renders the headers
	 */
	ServletRateLimitedMethodInterceptor(RateLimitEnforcer enforcer, RateLimitResponses responses) {
		this(() -> enforcer, () -> responses, new RateLimitedCallInterceptor(() -> enforcer, (policy) -> null));
	}

	/**
	 * An interceptor that obtains the enforcer and the responses on first use (once), for when it is created before
	 * them (as a bean post-processor's collaborator).
	 * @param enforcer supplies the enforcer
	 * @param responses supplies what renders the headers
	 * @param calls checks the calls that are not a request's (outside a request, or waiting for a turn)
	 */
	ServletRateLimitedMethodInterceptor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, RateLimitedCallInterceptor calls) {
		this.enforcer = SingletonSupplier.of(enforcer);
		this.responses = SingletonSupplier.of(responses);
		this.calls = calls;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (ReflectionUtils.isObjectMethod(method)) {
			return invocation.proceed();
		}
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return this.calls.invoke(invocation);
		}
		RateLimitEnforcer enforcer = this.enforcer.get();
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
		List<RateLimitEnforcer.Target> targets = enforcer.annotationTargets(method, targetClass);
		if (targets.isEmpty()) {
			return invocation.proceed();
		}
		RequestScope scope = RequestScope.of(servlet.getRequest());
		if (!this.calls.maxWait(method, targetClass).isZero()) {
			return this.calls.invoke(invocation, scope.request());
		}
		List<RateLimitDecision> earlier = scope.admitted();
		RateLimitDecision decision = scope.check(enforcer, targets, method, invocation.getArguments());
		if (!decision.allowed()) {
			// what earlier checks took is given back when the 429 is written (RateLimitExceptionResolver), not here:
			// an application that catches the exception and serves the request anyway must still be counted
			throw new RateLimitExceededException(RateLimitDecision.mergeDenied(earlier, decision));
		}
		HttpServletResponse response = servlet.getResponse();
		if (response != null && !response.isCommitted()) {
			RequestScope.setHeaders(response, this.responses.get().headers(RateLimitDecision.merge(scope.admitted())));
		}
		return invocation.proceed();
	}

}
