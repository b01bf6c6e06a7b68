/**
 * Spring Cloud Gateway integration: {@link io.github.ratelimit.gateway.PolicyRateLimiter}, a {@code RateLimiter} whose
 * routes name configured policies, and the global filter that gives its denials the starter's response.
 */
@NullMarked
package io.github.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
