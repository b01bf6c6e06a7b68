/** Spring Boot auto-configuration of the rate-limit engine. */
@NullMarked
package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;
