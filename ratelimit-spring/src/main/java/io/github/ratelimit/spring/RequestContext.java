package io.github.ratelimit.spring;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/** What key resolvers see of a request, the same for servlet and WebFlux; {@code #request} in SpEL keys. */
public interface RequestContext {

	/** The HTTP method, e.g. {@code GET}. */
	String method();

	/** The path within the application (without the context path). */
	String path();

	/** The path as the client sent it, context path included: the problem body's {@code instance}. */
	default String requestPath() {
		return path();
	}

	/** The client IP address as the server sees it (forwarded headers as the server trusts them), or null. */
	@Nullable String remoteAddress();

	/** A header's first value, or null. */
	@Nullable String header(String name);

	/** The authenticated principal, or null. */
	@Nullable Principal principal();

	/** A servlet request or exchange attribute's value, or null. */
	@Nullable Object attribute(String name);

	/** The {@code HttpServletRequest} or {@code ServerWebExchange}. */
	Object nativeRequest();

}
