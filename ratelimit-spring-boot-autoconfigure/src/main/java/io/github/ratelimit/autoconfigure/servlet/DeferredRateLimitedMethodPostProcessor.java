package io.github.ratelimit.autoconfigure.servlet;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;

/**
 * A {@link RateLimitedMethodPostProcessor} created on first need: when the first bean with {@link RateLimited}
 * methods is initialized. {@code RateLimitedMethodPostProcessor} takes the {@link RateLimitEnforcer} itself, and a
 * bean post-processor is created before all other beans: created eagerly, it would pull the enforcer, the limiter,
 * the Redis connection factory and the policies' {@code KeyResolver} beans into the post-processor phase, where
 * they miss other post-processors (metrics, observation). This defers all of them until a rate-limited bean exists,
 * which is a regular bean created after every post-processor.
 */
final class DeferredRateLimitedMethodPostProcessor
		implements BeanPostProcessor, BeanFactoryAware, BeanClassLoaderAware, Ordered, AopInfrastructureBean {

	/** The same beans {@link RateLimitedMethodPostProcessor} advises. */
	private static final Pointcut RATE_LIMITED = new ComposablePointcut(
			new AnnotationMatchingPointcut(RateLimited.class, true))
		.union(new AnnotationMatchingPointcut(RateLimited.List.class, true))
		.union(AnnotationMatchingPointcut.forMethodAnnotation(RateLimited.class))
		.union(AnnotationMatchingPointcut.forMethodAnnotation(RateLimited.List.class));

	private final Supplier<RateLimitEnforcer> enforcer;

	private final MethodInterceptor interceptor;

	private final Map<Class<?>, Boolean> eligible = new ConcurrentHashMap<>();

	private @Nullable BeanFactory beanFactory;

	private @Nullable ClassLoader beanClassLoader;

	private volatile @Nullable RateLimitedMethodPostProcessor delegate;

	DeferredRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer, MethodInterceptor interceptor) {
		this.enforcer = enforcer;
		this.interceptor = interceptor;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void setBeanClassLoader(ClassLoader classLoader) {
		this.beanClassLoader = classLoader;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof AopInfrastructureBean) {
			return bean;
		}
		Class<?> type = AopUtils.getTargetClass(bean);
		if (!this.eligible.computeIfAbsent(type, (candidate) -> AopUtils.canApply(RATE_LIMITED, candidate))) {
			return bean;
		}
		return delegate().postProcessAfterInitialization(bean, beanName);
	}

	private RateLimitedMethodPostProcessor delegate() {
		RateLimitedMethodPostProcessor delegate = this.delegate;
		if (delegate == null) {
			synchronized (this) {
				delegate = this.delegate;
				if (delegate == null) {
					delegate = new RateLimitedMethodPostProcessor(this.enforcer.get(), this.interceptor);
					if (this.beanClassLoader != null) {
						delegate.setBeanClassLoader(this.beanClassLoader);
					}
					if (this.beanFactory != null) {
						delegate.setBeanFactory(this.beanFactory);
					}
					this.delegate = delegate;
				}
			}
		}
		return delegate;
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
