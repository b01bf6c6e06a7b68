package io.github.ratelimit.spring.servlet;

import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;

/**
 * Proxies the beans with {@link io.github.ratelimit.spring.RateLimited} methods of a servlet application with a
 * {@link ServletRateLimitedMethodInterceptor}, and validates their annotations at startup. Every return type works,
 * since the check runs before the method on the calling thread.
 * <p>
 * The enforcer is looked up only when the first bean with {@code @RateLimited} methods is created, so that it, the
 * limiter and the Redis connection are ordinary beans, processed by every other post-processor.
 */
public final class ServletRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
	 * A post-processor.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 */
	public ServletRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer) {
		super(enforcer, new ServletRateLimitedMethodInterceptor(enforcer));
	}

}
