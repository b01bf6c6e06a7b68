/**
 * Rate limiting for servlet applications (Spring MVC): the {@link io.github.ratelimit.spring.servlet.RateLimitFilter}
 * for the rules of {@code ratelimit.filter.rules}, the
 * {@code ServletRateLimitedMethodInterceptor} for
 * {@link io.github.ratelimit.spring.RateLimited} methods, and the
 * {@link io.github.ratelimit.spring.servlet.RateLimitExceptionResolver} that turns a method's denial into the 429
 * response. Concurrency permits are released when the response completes, also for exceptions and for
 * asynchronous and streaming responses.
 */
@NullMarked
package io.github.ratelimit.spring.servlet;

import org.jspecify.annotations.NullMarked;
