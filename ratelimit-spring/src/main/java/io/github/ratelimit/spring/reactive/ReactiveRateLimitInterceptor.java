package io.github.ratelimit.spring.reactive;

import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.DecisionScope;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import io.github.ratelimit.spring.RequestContext;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Checks reactive {@link RateLimited} methods on each subscription in the exchange's {@link ExchangeScope} (admitted:
 * the headers; denied: {@link RateLimitExceededException}); other calls go to the {@link RateLimitedCallInterceptor}.
 */
final class ReactiveRateLimitInterceptor implements MethodInterceptor {

	private final Supplier<RateLimitEnforcer> enforcer;

	private final Supplier<RateLimitResponses> responses;

	private final RateLimitedCallInterceptor calls;

	/** Looks the enforcer and the responses up on its first call. */
	ReactiveRateLimitInterceptor(Supplier<RateLimitEnforcer> enforcer, Supplier<RateLimitResponses> responses,
			RateLimitedCallInterceptor calls) {
		this.enforcer = RateLimitedCallInterceptor.once(enforcer);
		this.responses = RateLimitedCallInterceptor.once(responses);
		this.calls = calls;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		List<RateLimitEnforcer.Target> targets = this.calls.targets(invocation);
		if (targets.isEmpty()) {
			return invocation.proceed();
		}
		Method method = invocation.getMethod();
		Class<?> returnType = method.getReturnType();
		if (!RateLimitedCallInterceptor.isReactive(returnType)) {
			Class<?> targetClass = RateLimitedCallInterceptor.targetClass(invocation);
			if (RateLimitedCallInterceptor.isController(targetClass)) {
				throw new IllegalStateException(unsupportedMessage(method, targetClass));
			}
			return this.calls.invoke(invocation);
		}
		@Nullable Object[] args = invocation.getArguments().clone();
		boolean waits = this.calls.waits(invocation);
		Flux<?> checked = Flux.deferContextual((context) -> {
			if (!ExchangeScope.isPresent(context)) {
				return beanCall(invocation, null);
			}
			return ExchangeScope.current(context).flatMapMany((scope) -> waits ? beanCall(invocation, scope.request())
					: RateLimitedCallInterceptor.admitted(invocation, admit(scope, targets, method, args),
							(decision) -> done(scope, decision)));
		});
		// a Mono's check and call emit one value at most
		return (returnType == Mono.class) ? Mono.fromDirect(checked) : checked;
	}

	@SuppressWarnings("unchecked")
	private Flux<Object> beanCall(MethodInvocation invocation, @Nullable RequestContext request) {
		try {
			Object result = this.calls.invoke(invocation, request);
			return (result != null) ? Flux.from((Publisher<Object>) result) : Flux.empty();
		}
		catch (Throwable ex) {
			return Flux.error(ex);
		}
	}

	private Mono<RateLimitDecision> admit(ExchangeScope scope, List<RateLimitEnforcer.Target> targets, Method method,
			@Nullable Object[] args) {
		return scope.admit(this.enforcer.get(), scope.request(), targets, method, args,
				(admitted) -> scope.setHeaders(this.responses.get(), admitted));
	}

	/** Without the filter nobody else releases the call's permits: it does, when its result terminates. */
	private static Mono<Void> done(ExchangeScope scope, RateLimitDecision decision) {
		return scope.isFilterOwned() ? Mono.empty() : DecisionScope.release(decision.permit());
	}

	/** Why a controller's rate-limited method must return {@code Mono}, {@code Flux} or {@code Publisher}. */
	static String unsupportedMessage(Method method, Class<?> targetClass) {
		boolean onMethod = AnnotatedElementUtils.hasAnnotation(method, RateLimited.class)
				|| AnnotatedElementUtils.hasAnnotation(method, RateLimited.List.class);
		return "@RateLimited " + (onMethod ? "method " : "applies to ") + ClassUtils.getUserClass(targetClass).getName()
				+ "." + method.getName() + "() " + (onMethod ? "" : "(through the annotation on its class) ")
				+ "which returns " + method.getReturnType().getName() + ": in a WebFlux application a rate-limited "
				+ "method must return Mono, Flux or Publisher, so that its policies are checked without blocking when "
				+ "the result is subscribed to. Return Mono.fromSupplier(...) / Mono.just(...), or limit the path "
				+ "with a filter rule (ratelimit.filter.rules)"
				+ (onMethod ? "." : ", or annotate the reactive methods instead of the class.");
	}

}
