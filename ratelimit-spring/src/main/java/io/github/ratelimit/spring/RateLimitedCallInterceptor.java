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
 * Checks the {@link RateLimited} policies of a call that is not a web request's: alone in non-web applications, and
 * for the servlet and WebFlux interceptors' calls outside a request or waiting for a turn. Admitted, the method runs
 * and its permits are released when it (or its {@code Mono}, {@code Flux}, {@code CompletableFuture}) ends; denied,
 * it throws {@link RateLimitExceededException}, or waits out the retry-after and asks again within its
 * {@code maxWait} (a {@code Mono.delay} retry, {@link DecisionScope#admit}). Reactive results are checked per
 * subscription and futures at once, without blocking (the method then runs on the bounded elastic scheduler); a
 * blocking method's thread waits on the same admission.
 */
public final class RateLimitedCallInterceptor implements MethodInterceptor {

	private final Supplier<RateLimitEnforcer> enforcer;

	private final Function<String, @Nullable Duration> policyMaxWait;

	private final ConcurrentMap<MethodClassKey, Duration> maxWaits = new ConcurrentHashMap<>();

	/**
	 * @param enforcer supplies the enforcer, called at most once
	 * @param policyMaxWait the {@code max-wait} of a configured policy by name, null when it has none
	 */
	public RateLimitedCallInterceptor(Supplier<RateLimitEnforcer> enforcer,
			Function<String, @Nullable Duration> policyMaxWait) {
		this.enforcer = once(enforcer);
		this.policyMaxWait = policyMaxWait;
	}

	/**
	 * A bean looked up on its first use, without a lock: Spring's {@code SingletonSupplier} parks a second first
	 * caller, and an event loop must not park. Two first calls may both look the bean up; one answer is kept.
	 * @param lookup looks the bean up
	 * @return the bean, looked up once
	 */
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
	 * Checks a bean method call.
	 * @param invocation the call
	 * @param request the web request it is made in, whose keys ({@code ip}, headers) then apply; null outside one
	 * @return what the method returns, or a deferred publisher or future of the same type
	 * @throws Throwable what the method throws, or {@link RateLimitExceededException} on a denial
	 */
	public @Nullable Object invoke(MethodInvocation invocation, @Nullable RequestContext request) throws Throwable {
		List<RateLimitEnforcer.Target> targets = targets(invocation);
		if (targets.isEmpty()) {
			return invocation.proceed();
		}
		Method method = invocation.getMethod();
		Call call = new Call(this.enforcer.get(),
				(request != null) ? request : new MethodCallContext(method, invocation), targets, method,
				invocation.getArguments().clone(), maxWait(method, targetClass(invocation)));
		Class<?> returnType = method.getReturnType();
		if (returnType == Mono.class || returnType == Flux.class || returnType == Publisher.class) {
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

	/**
	 * The {@link RateLimited} policies of a call ({@link RateLimitEnforcer#annotationTargets}).
	 * @param invocation the call
	 * @return the policies, none for {@code Object}'s methods
	 */
	public List<RateLimitEnforcer.Target> targets(MethodInvocation invocation) {
		Method method = invocation.getMethod();
		return ReflectionUtils.isObjectMethod(method) ? List.of()
				: this.enforcer.get().annotationTargets(method, targetClass(invocation));
	}

	/**
	 * Whether a call may wait for its turn: a bean method call then, not a request's.
	 * @param invocation the call
	 * @return whether its {@link #maxWait} is not zero
	 */
	public boolean waits(MethodInvocation invocation) {
		return !maxWait(invocation.getMethod(), targetClass(invocation)).isZero();
	}

	/**
	 * The longest a call may wait for its turn: its annotations' longest {@link RateLimited#maxWait()}, else its
	 * policies' longest {@code max-wait}, else zero; resolved once per method.
	 * @param targetClass the bean's class
	 * @return the longest wait, zero for none
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

	/**
	 * Whether a bean is a web controller, whose {@link RateLimited} methods are a request's handlers.
	 * @param type the bean's class
	 * @return true for {@code @Controller} and {@code @RestController} classes
	 */
	public static boolean isController(Class<?> type) {
		return AnnotatedElementUtils.hasAnnotation(ClassUtils.getUserClass(type), Controller.class);
	}

	/**
	 * The class of the bean a call is made on, the declaring class without a target.
	 * @param invocation the call
	 * @return the class
	 */
	public static Class<?> targetClass(MethodInvocation invocation) {
		Object target = invocation.getThis();
		return (target != null) ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
	}

	/**
	 * A method's publisher, of its return type ({@code Mono} or else {@code Flux}), that runs the method per
	 * subscription once {@code admit} emits, and calls {@code done} with the decision however it ends.
	 * @param invocation a call of a method returning {@code Mono}, {@code Flux} or {@code Publisher}
	 * @param admit emits the admitted decision, or signals the denial (the method then never runs)
	 * @param done what to do when the method's publisher terminates or is cancelled
	 * @return the publisher
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

	/**
	 * Calls a method returning a publisher, again for every subscription, through a clone of the invocation.
	 * @param invocation the call
	 * @return the method's publisher, or one signalling what it threw
	 */
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
		 * Waits on the admission, on any thread (not only where {@code block()} is allowed). An interrupt cancels the
		 * wait and throws the denial it was waiting out (or, during the first check, an
		 * {@link IllegalStateException}); the thread's flag stays set for the caller.
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
