/**
 * Rate limiting for Spring MVC: the {@link io.github.ratelimit.spring.servlet.RateLimitFilter} for the filter rules,
 * an interceptor for {@link io.github.ratelimit.spring.RateLimited} methods, and the
 * {@link io.github.ratelimit.spring.servlet.RateLimitExceptionResolver} that turns a method's denial into the 429.
 */
@NullMarked
package io.github.ratelimit.spring.servlet;

import org.jspecify.annotations.NullMarked;
