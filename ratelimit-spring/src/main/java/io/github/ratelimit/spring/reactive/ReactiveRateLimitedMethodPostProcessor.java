package io.github.ratelimit.spring.reactive;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ReflectionUtils;

/**
 * The post-processor of WebFlux applications: {@link RateLimited} beans get a {@code ReactiveRateLimitInterceptor};
 * a controller's rate-limited method that does not return {@code Mono}, {@code Flux} or {@code Publisher} fails.
 */
public final class ReactiveRateLimitedMethodPostProcessor extends RateLimitedMethodPostProcessor {

	private static final long serialVersionUID = 1L;

	/** A post-processor whose bean method calls never wait for their policies' {@code max-wait}. */
	public ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses) {
		this(enforcer, responses, (policy) -> null);
	}

	/** A post-processor; {@code policyMaxWait} gives a configured policy's {@code max-wait} by name (null: none). */
	public ReactiveRateLimitedMethodPostProcessor(Supplier<RateLimitEnforcer> enforcer,
			Supplier<RateLimitResponses> responses, Function<String, @Nullable Duration> policyMaxWait) {
		super(enforcer, policyMaxWait, (calls) -> new ReactiveRateLimitInterceptor(enforcer, responses, calls));
	}

	@Override
	protected void checkMethod(Method method, Class<?> type) {
		if (!ReflectionUtils.isObjectMethod(method) && !RateLimitedCallInterceptor.isReactive(method.getReturnType())
				&& RateLimitedCallInterceptor.isController(type)) {
			throw new IllegalStateException(ReactiveRateLimitInterceptor.unsupportedMessage(method, type));
		}
	}

}
