package io.github.ratelimit.spring.reactive;

import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;

import org.springframework.aop.Pointcut;

/**
 * Proxies the beans with {@link RateLimited} methods of a WebFlux application with a
 * {@link ReactiveRateLimitInterceptor}, validates their annotations at startup, and fails the startup when a
 * rate-limited method does not return {@code Mono}, {@code Flux} or {@code Publisher} (such a method could only be
 * checked by blocking the event loop).
 * <p>
 * The enforcer is looked up only when the first bean with {@code @RateLimited} methods is created, so that it, the
 * limiter and the Redis connection are ordinary beans, processed by every other post-processor.
 */
public final class ReactiveRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
	 * A post-processor.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 */
	public ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer) {
		super(enforcer, new ReactiveRateLimitInterceptor(enforcer));
	}

	@Override
	protected void checkBean(Class<?> type, Pointcut pointcut) {
		ReactiveRateLimitInterceptor.checkReturnTypes(type, pointcut);
	}

}
