/**
 * The WebFlux integration: {@link io.github.ratelimit.spring.reactive.RateLimitWebFilter} for the filter rules, an
 * interceptor for {@code @RateLimited} reactive methods, and the
 * {@link io.github.ratelimit.spring.reactive.RateLimitWebExceptionHandler} for their denials. Nothing here blocks.
 */
@NullMarked
package io.github.ratelimit.spring.reactive;

import org.jspecify.annotations.NullMarked;
