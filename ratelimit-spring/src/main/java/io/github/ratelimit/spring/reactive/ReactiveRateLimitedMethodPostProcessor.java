package io.github.ratelimit.spring.reactive;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;

/**
 * The post-processor of WebFlux applications: {@link RateLimited} beans get a {@code ReactiveRateLimitInterceptor},
 * and a controller's rate-limited method that does not return {@code Mono}, {@code Flux} or {@code Publisher} fails
 * the start. Other beans' methods are bean method calls ({@link RateLimitedCallInterceptor}).
 */
public final class ReactiveRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/**
	 * A post-processor.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 * @param responses supplies what renders the headers, on the first rate-limited call
	 */
	public ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses) {
		this(enforcer, responses, (policy) -> null);
	}

	/**
	 * A post-processor whose bean method calls may wait for their turn up to their policies' {@code max-wait}.
	 * @param enforcer supplies the enforcer when the first rate-limited bean is created
	 * @param responses supplies what renders the headers, on the first rate-limited call
	 * @param policyMaxWait the {@code max-wait} of a configured policy by name, null when it has none
	 */
	public ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, Function<String, @Nullable Duration> policyMaxWait) {
		this(enforcer, responses, new RateLimitedCallInterceptor(enforcer, policyMaxWait));
	}

	private ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, RateLimitedCallInterceptor calls) {
		super(enforcer, new ReactiveRateLimitInterceptor(enforcer, responses, calls), calls);
	}

	@Override
	protected void checkBean(Class<?> type, Pointcut pointcut) {
		if (RateLimitedCallInterceptor.isController(type)) {
			ReactiveRateLimitInterceptor.checkReturnTypes(type, pointcut);
		}
	}

}
