/**
 * The WebFlux integration: {@link io.github.ratelimit.spring.reactive.RateLimitWebFilter} applies the filter rules,
 * {@code ReactiveRateLimitInterceptor} checks {@code @RateLimited} methods
 * returning {@code Mono}, {@code Flux} or {@code Publisher} when their result is subscribed to, and
 * {@link io.github.ratelimit.spring.reactive.RateLimitWebExceptionHandler} turns a method's denial into the 429
 * response. Nothing here blocks a thread.
 */
@NullMarked
package io.github.ratelimit.spring.reactive;

import org.jspecify.annotations.NullMarked;
