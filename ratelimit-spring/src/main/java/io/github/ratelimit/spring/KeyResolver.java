package io.github.ratelimit.spring;

import org.jspecify.annotations.Nullable;

/** Resolves the identity a policy counts a request for; a bean, named in keys as {@code @beanName}. */
@FunctionalInterface
public interface KeyResolver {

	/** The identity, or null when this request has none (see {@link MissingKey}). */
	@Nullable String resolve(RequestContext request);

}
