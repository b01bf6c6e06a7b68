/** The rate-limit engine API: policies, requests, decisions, and the backend contract. */
@NullMarked
package io.github.ratelimit.core;

import org.jspecify.annotations.NullMarked;
