package io.github.ratelimit.spring.servlet;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import org.jspecify.annotations.Nullable;

/** The post-processor of servlet applications: rate-limited beans get a {@code ServletRateLimitedMethodInterceptor}. */
public final class ServletRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/** A post-processor; {@code policyMaxWait} gives a configured policy's {@code max-wait} by name (null: none). */
	public ServletRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, Function<String, @Nullable Duration> policyMaxWait) {
		super(enforcer, policyMaxWait, (calls) -> new ServletRateLimitedMethodInterceptor(enforcer, responses, calls));
	}

}
