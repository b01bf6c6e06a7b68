/**
 * The Redis backend: every evaluation is one atomic Lua script per hash slot, run with EVALSHA.
 */
@NullMarked
package io.github.ratelimit.core.redis;

import org.jspecify.annotations.NullMarked;
