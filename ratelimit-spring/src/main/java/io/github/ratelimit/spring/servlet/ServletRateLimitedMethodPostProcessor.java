package io.github.ratelimit.spring.servlet;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import org.jspecify.annotations.Nullable;

/**
 * The post-processor of servlet applications: {@link io.github.ratelimit.spring.RateLimited} beans get a
 * {@code ServletRateLimitedMethodInterceptor}; calls outside a request are bean method calls
 * ({@link RateLimitedCallInterceptor}).
 */
public final class ServletRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
	 * A post-processor whose bean method calls may wait for their turn up to their policies' {@code max-wait}.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 * @param responses supplies what renders the headers, on the first rate-limited call
	 * @param policyMaxWait the {@code max-wait} of a configured policy by name, null when it has none
	 */
	public ServletRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, Function<String, @Nullable Duration> policyMaxWait) {
		this(enforcer, responses, new RateLimitedCallInterceptor(enforcer, policyMaxWait));
	}

	private ServletRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, RateLimitedCallInterceptor calls) {
		super(enforcer, new ServletRateLimitedMethodInterceptor(enforcer, responses, calls), calls);
	}

}
