/** Auto-configuration of rate limiting for servlet web applications. */
@NullMarked
package io.github.ratelimit.autoconfigure.servlet;

import org.jspecify.annotations.NullMarked;
