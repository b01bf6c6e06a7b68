package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Proxies beans with {@link RateLimited} methods or classes, validating them when the bean is created. Its servlet,
 * reactive and non-web extensions give their interceptor and what else they refuse; exactly one is registered.
 */
public abstract class RateLimitedMethodPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	private static final long serialVersionUID = 1L;

	private final transient Supplier<RateLimitEnforcer> enforcer;

	private final Pointcut pointcut;

	private final transient @Nullable RateLimitedCallInterceptor calls;

	/** A post-processor that looks the enforcer up when the first {@link RateLimited} bean is created. */
	protected RateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer, MethodInterceptor interceptor) {
		this(enforcer, interceptor, null);
	}

	/**
	 * A post-processor whose bean method calls may wait up to {@code policyMaxWait} (a policy's by name, null: none);
	 * {@code interceptor} makes the side's interceptor over the bean call interceptor.
	 */
	protected RateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Function<String, @Nullable Duration> policyMaxWait,
			Function<RateLimitedCallInterceptor, MethodInterceptor> interceptor) {
		this(enforcer, new RateLimitedCallInterceptor(enforcer, policyMaxWait), interceptor);
	}

	private RateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer, RateLimitedCallInterceptor calls,
			Function<RateLimitedCallInterceptor, MethodInterceptor> interceptor) {
		this(enforcer, interceptor.apply(calls), calls);
	}

	private RateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer, MethodInterceptor interceptor,
			@Nullable RateLimitedCallInterceptor calls) {
		this.enforcer = SingletonSupplier.of(enforcer);
		this.calls = calls;
		this.pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(RateLimited.class, true))
			.union(new AnnotationMatchingPointcut(RateLimited.List.class, true))
			// method annotations also on interface methods and as meta-annotations, as the enforcer resolves them
			.union(new AnnotationMatchingPointcut(null, RateLimited.class, true))
			.union(new AnnotationMatchingPointcut(null, RateLimited.List.class, true));
		this.advisor = new DefaultPointcutAdvisor(this.pointcut, interceptor);
		setProxyTargetClass(true);
		setBeforeExistingAdvisors(true);
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Class<?> type = AopUtils.getTargetClass(bean);
		if (!(bean instanceof AopInfrastructureBean) && isEligible(type)) {
			validate(type);
		}
		return super.postProcessAfterInitialization(bean, beanName);
	}

	/** What a side refuses at startup of a rate-limited method beyond invalid annotations: throws naming it. */
	protected void checkMethod(Method method, Class<?> type) {
	}

	private void validate(Class<?> type) {
		ReflectionUtils.doWithMethods(ClassUtils.getUserClass(type), (method) -> {
			if (this.pointcut.getMethodMatcher().matches(method, type)) {
				this.enforcer.get().annotationTargets(method, type);
				if (this.calls != null) {
					this.calls.maxWait(method, type);
				}
				checkMethod(method, type);
			}
		}, (Method method) -> !method.isSynthetic() && !method.isBridge()
				&& method.getDeclaringClass() != Object.class && Modifier.isPublic(method.getModifiers()));
	}

}
