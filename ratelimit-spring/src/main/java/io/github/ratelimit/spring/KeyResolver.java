package io.github.ratelimit.spring;

import org.jspecify.annotations.Nullable;

/**
 * Resolves the identity a policy counts a request for (the client address, an API key, a user). Declare one as a
 * bean and refer to it as {@code key: "@beanName"}.
 */
@FunctionalInterface
public interface KeyResolver {

	/** The identity, or null when this request has none (see {@link MissingKey}). */
	@Nullable String resolve(RequestContext request);

}
