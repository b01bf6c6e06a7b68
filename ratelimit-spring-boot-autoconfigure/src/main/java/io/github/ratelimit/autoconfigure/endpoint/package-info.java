/** The {@code ratelimits} Actuator endpoint: policies, usage, resets and runtime overrides. */
@NullMarked
package io.github.ratelimit.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
