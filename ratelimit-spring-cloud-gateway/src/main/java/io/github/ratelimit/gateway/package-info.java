/**
 * Spring Cloud Gateway (server WebFlux) integration: {@link io.github.ratelimit.gateway.PolicyRateLimiter}, a
 * {@code RateLimiter} for the gateway's {@code RequestRateLimiter} filter whose routes name configured policies, and
 * {@code RateLimitGatewayFilter}, the global filter that gives its denials the starter's
 * response and releases concurrency permits when the proxied response completes.
 */
@NullMarked
package io.github.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
