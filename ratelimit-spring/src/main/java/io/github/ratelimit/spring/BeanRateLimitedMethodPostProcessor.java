package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The post-processor of non-web applications: {@link RateLimited} beans get a {@link RateLimitedCallInterceptor}
 * (a denial throws {@link RateLimitExceededException} or waits up to {@code maxWait}).
 */
public final class BeanRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
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
