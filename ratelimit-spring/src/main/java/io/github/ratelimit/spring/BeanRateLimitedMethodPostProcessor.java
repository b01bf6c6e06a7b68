package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Proxies the beans with {@link RateLimited} methods of a non-web application (no servlet or reactive web server)
 * with a {@link RateLimitedCallInterceptor}, and validates their annotations at startup: every call is checked, a
 * denial throws {@link RateLimitExceededException} or waits for its turn up to the method's {@code maxWait}.
 * <p>
 * The enforcer is looked up only when the first bean with {@code @RateLimited} methods is created, so that it, the
 * limiter and the Redis connection are ordinary beans, processed by every other post-processor.
 */
public final class BeanRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
	 * A post-processor.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 * @param policyMaxWait the {@code max-wait} of a configured policy by name, null when it has none
	 */
	public BeanRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Function<String, @Nullable Duration> policyMaxWait) {
		this(new RateLimitedCallInterceptor(enforcer, policyMaxWait), enforcer);
	}

	private BeanRateLimitedMethodPostProcessor(RateLimitedCallInterceptor calls, Supplier<RateLimitEnforcer> enforcer) {
		super(enforcer, calls, calls);
	}

}
