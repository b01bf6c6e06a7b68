/**
 * The Redis backend: every evaluation is one atomic Lua script per hash slot, run with EVALSHA, or as a
 * Redis function with FCALL (Redis 7+).
 */
@NullMarked
package io.github.ratelimit.core.redis;

import org.jspecify.annotations.NullMarked;
