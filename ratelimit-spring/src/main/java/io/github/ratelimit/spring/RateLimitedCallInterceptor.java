package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.github.ratelimit.core.RateLimitDecision;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks the {@link RateLimited} policies of a call that is not a web request's: admitted, the method runs and its
 * permits are released when it (or its {@code Mono}, {@code Flux}, future) ends; denied, it throws
 * {@link RateLimitExceededException}, or waits out the retry-after within its {@code maxWait}.
 */
public final class RateLimitedCallInterceptor implements MethodInterceptor {

	private final Supplier<RateLimitEnforcer> enforcer;

	private final Function<String, @Nullable Duration> policyMaxWait;

	private final ConcurrentMap<MethodClassKey, Duration> maxWaits = new ConcurrentHashMap<>();

	/** {@code policyMaxWait} gives a configured policy's {@code max-wait} by name, null for none. */
	public RateLimitedCallInterceptor(Supplier<RateLimitEnforcer> enforcer,
			Function<String, @Nullable Duration> policyMaxWait) {
		this.enforcer = once(enforcer);
		this.policyMaxWait = policyMaxWait;
	}

	/** A bean looked up on its first use without a lock (an event loop must not park); one answer is kept. */
	public static <T> Supplier<T> once(Supplier<T> lookup) {
		AtomicReference<T> found = new AtomicReference<>();
		return () -> {
			T value = found.get();
			if (value == null) {
				found.compareAndSet(null, lookup.get());
				value = found.get();
			}
			return value;
		};
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		return invoke(invocation, null);
	}

	/**
	 * Checks a bean method call, in a web request (whose keys then apply) or none (null); returns what the method
	 * returns, or a deferred publisher or future of the same type.
	 * @throws Throwable what the method throws, or {@link RateLimitExceededException} on a denial
	 */
	public @Nullable Object invoke(MethodInvocation invocation, @Nullable RequestContext request) throws Throwable {
		List<RateLimitEnforcer.Target> targets = targets(invocation);
		if (targets.isEmpty()) {
			return invocation.proceed();
		}
		Method method = invocation.getMethod();
		Call call = new Call(this.enforcer.get(),
				(request != null) ? request : new MethodCallContext(invocation), targets, method,
				invocation.getArguments().clone(), maxWait(method, targetClass(invocation)));
		Class<?> returnType = method.getReturnType();
		if (isReactive(returnType)) {
			return admitted(invocation, call.admitAsync(), (decision) -> DecisionScope.release(decision.permit()));
		}
		if (returnType == CompletableFuture.class || returnType == CompletionStage.class) {
			return call.admitAsync()
				.publishOn(Schedulers.boundedElastic())
				.flatMap((decision) -> Mono.fromCompletionStage(() -> future(invocation))
					.doFinally((signal) -> DecisionScope.release(decision.permit()).subscribe()))
				.toFuture();
		}
		RateLimitDecision decision = call.await();
		try {
			return invocation.proceed();
		}
		finally {
			decision.permit().release();
		}
	}

	/** The {@link RateLimited} policies of a call, none for {@code Object}'s methods. */
	public List<RateLimitEnforcer.Target> targets(MethodInvocation invocation) {
		Method method = invocation.getMethod();
		return ReflectionUtils.isObjectMethod(method) ? List.of()
				: this.enforcer.get().annotationTargets(method, targetClass(invocation));
	}

	/** Whether a call may wait for its turn (its {@link #maxWait} is not zero): a bean method call, not a request's. */
	public boolean waits(MethodInvocation invocation) {
		return !maxWait(invocation.getMethod(), targetClass(invocation)).isZero();
	}

	/**
	 * The longest a call may wait for its turn: its annotations' longest {@link RateLimited#maxWait()}, else its
	 * policies' longest {@code max-wait}, else zero; resolved once per method.
	 * @throws IllegalStateException naming the method when a {@code maxWait} is not a valid duration
	 */
	public Duration maxWait(Method method, Class<?> targetClass) {
		return this.maxWaits.computeIfAbsent(new MethodClassKey(method, targetClass),
				(key) -> resolveMaxWait(method, targetClass));
	}

	private Duration resolveMaxWait(Method method, Class<?> targetClass) {
		List<RateLimitEnforcer.Target> targets = this.enforcer.get().annotationTargets(method, targetClass);
		boolean annotated = targets.stream().anyMatch((target) -> target.maxWait() != null);
		// a policy's max-wait is for the calls of other beans
		Stream<@Nullable Duration> waits = (annotated || isController(targetClass))
				? targets.stream().map(RateLimitEnforcer.Target::maxWait)
				: targets.stream().map((target) -> this.policyMaxWait.apply(target.policy().name()));
		return waits.filter(Objects::nonNull).max(Comparator.naturalOrder()).orElse(Duration.ZERO);
	}

	/** Whether a method's return type is {@code Mono}, {@code Flux} or {@code Publisher}: checked per subscription. */
	public static boolean isReactive(Class<?> returnType) {
		return returnType == Mono.class || returnType == Flux.class || returnType == Publisher.class;
	}

	/** Whether a bean's class is a web controller ({@code @Controller}, {@code @RestController}). */
	public static boolean isController(Class<?> type) {
		return AnnotatedElementUtils.hasAnnotation(ClassUtils.getUserClass(type), Controller.class);
	}

	/** The class of the bean a call is made on, the declaring class without a target. */
	public static Class<?> targetClass(MethodInvocation invocation) {
		Object target = invocation.getThis();
		return (target != null) ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
	}

	/**
	 * A reactive method's publisher, of its return type ({@code Mono} or else {@code Flux}), that runs the method per
	 * subscription once {@code admit} emits (never on a denial) and calls {@code done} with the decision however it
	 * ends.
	 */
	public static Publisher<?> admitted(MethodInvocation invocation, Mono<RateLimitDecision> admit,
			Function<RateLimitDecision, Mono<Void>> done) {
		if (invocation.getMethod().getReturnType() == Mono.class) {
			return Mono.usingWhen(admit, (decision) -> Mono.from(proceed(invocation)), done,
					(decision, error) -> done.apply(decision), done);
		}
		return Flux.usingWhen(admit, (decision) -> proceed(invocation), done, (decision, error) -> done.apply(decision),
				done);
	}

	/** Calls a method returning a publisher through a clone of the invocation: its publisher, or what it threw. */
	public static Publisher<?> proceed(MethodInvocation invocation) {
		try {
			Object result = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone().proceed()
					: invocation.proceed();
			return (result != null) ? (Publisher<?>) result : Mono.empty();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static CompletionStage<@Nullable Object> future(MethodInvocation invocation) {
		try {
			Object result = invocation.proceed();
			return (result != null) ? (CompletionStage<@Nullable Object>) result : CompletableFuture.completedFuture(null);
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** One call's check: its policies, identity source and longest wait; each admission on a scope of its own. */
	private record Call(RateLimitEnforcer enforcer, RequestContext request, List<RateLimitEnforcer.Target> targets,
			Method method, @Nullable Object[] args, Duration maxWait) {

		/**
		 * Waits on the admission, on any thread. An interrupt cancels the wait and throws the denial it was waiting out
		 * (during the first check, an {@link IllegalStateException}), the thread's flag set.
		 */
		RateLimitDecision await() {
			DecisionScope scope = new DecisionScope();
			CompletableFuture<RateLimitDecision> admitted = admit(scope).toFuture();
			try {
				return admitted.get();
			}
			catch (InterruptedException ex) {
				admitted.cancel(true);
				Thread.currentThread().interrupt();
				List<RateLimitDecision> tried = scope.decisions();
				throw tried.isEmpty()
						? new IllegalStateException("Interrupted while waiting for the rate-limit backend", ex)
						: new RateLimitExceededException(tried.get(tried.size() - 1));
			}
			catch (ExecutionException ex) {
				throw Exceptions.propagate(Objects.requireNonNullElse(ex.getCause(), ex));
			}
		}

		/** Emits the admitted decision, or signals the denial; checked again per subscription. */
		Mono<RateLimitDecision> admitAsync() {
			return Mono.defer(() -> admit(new DecisionScope()));
		}

		private Mono<RateLimitDecision> admit(DecisionScope scope) {
			// keys resolved once, here: each retry after a denial checks the same request again
			Mono<RateLimitDecision> check = this.enforcer.resolved(this.request, this.targets, this.method, this.args);
			return scope.admit(scope.check(check), this.maxWait, (admitted) -> {
			});
		}

	}

}
