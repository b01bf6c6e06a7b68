/** Auto-configuration of rate limiting for reactive web applications. */
@NullMarked
package io.github.ratelimit.autoconfigure.reactive;

import org.jspecify.annotations.NullMarked;
