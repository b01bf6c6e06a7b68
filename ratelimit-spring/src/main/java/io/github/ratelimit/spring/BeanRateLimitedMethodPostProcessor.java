package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/** The post-processor of non-web applications: {@link RateLimited} beans get a {@link RateLimitedCallInterceptor}. */
public final class BeanRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/** A post-processor; {@code policyMaxWait} gives a configured policy's {@code max-wait} by name (null: none). */
	public BeanRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Function<String, @Nullable Duration> policyMaxWait) {
		super(enforcer, policyMaxWait, (calls) -> calls);
	}

}
