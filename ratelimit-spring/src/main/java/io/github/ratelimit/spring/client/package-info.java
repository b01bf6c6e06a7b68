/**
 * Outgoing calls to rate-limited partners: a {@code RestClient} interceptor and a {@code WebClient} filter that read
 * the partner's rate-limit headers, pace calls before the partner refuses, wait out a Retry-After and share what one
 * instance learned with the others through Redis.
 */
@NullMarked
package io.github.ratelimit.spring.client;

import org.jspecify.annotations.NullMarked;
