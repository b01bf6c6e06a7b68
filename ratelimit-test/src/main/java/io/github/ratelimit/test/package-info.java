/**
 * Testing support: {@link io.github.ratelimit.test.EmbeddedRedis} (a real Redis without Docker),
 * {@link io.github.ratelimit.test.RateLimitTester} (resets and reads) and
 * {@link io.github.ratelimit.test.EmbeddedRedisConfiguration} (a real Redis during development).
 */
@NullMarked
package io.github.ratelimit.test;

import org.jspecify.annotations.NullMarked;
