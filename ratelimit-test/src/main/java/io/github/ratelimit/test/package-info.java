/**
 * Testing support for applications that use the rate-limit starter: {@link io.github.ratelimit.test.EmbeddedRedis}
 * gives a test class a real Redis without Docker, {@link io.github.ratelimit.test.RateLimitTester} resets and reads
 * limits between and in tests, {@link io.github.ratelimit.test.EmbeddedRedisConfiguration} runs an application on a
 * real Redis during development.
 */
@NullMarked
package io.github.ratelimit.test;

import org.jspecify.annotations.NullMarked;
