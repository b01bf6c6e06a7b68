/**
 * Web-neutral parts of the Spring integration: {@link io.github.ratelimit.spring.RateLimited}, key resolution,
 * rules, headers and rejections, shared by the servlet filter and the WebFlux filter.
 */
@NullMarked
package io.github.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
