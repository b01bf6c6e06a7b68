/**
 * Auto-configuration of outgoing calls to rate-limited partners ({@code ratelimit.client.*}).
 */
@NullMarked
package io.github.ratelimit.autoconfigure.client;

import org.jspecify.annotations.NullMarked;
