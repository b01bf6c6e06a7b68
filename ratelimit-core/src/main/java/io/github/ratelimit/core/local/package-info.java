/** The in-memory backend: the same algorithms as the Lua scripts, for one instance, tests, and as a degraded mode. */
@NullMarked
package io.github.ratelimit.core.local;

import org.jspecify.annotations.NullMarked;
