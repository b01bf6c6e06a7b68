package io.github.ratelimit.spring;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/** What key resolvers see of a request, the same for servlet and WebFlux; {@code #request} in SpEL keys. */
public interface RequestContext {

	/** @return the HTTP method, e.g. {@code GET} */
	String method();

	/** @return the path within the application (without the context path) */
	String path();

	/** @return the path as the client sent it, context path included: the problem body's {@code instance} */
	default String requestPath() {
		return path();
	}

	/**
	 * The client address as the server sees it: the peer, or what {@code server.forward-headers-strategy} made of
	 * trusted proxies' headers (the rate limiter parses no header itself).
	 * @return the client IP address, or null when unknown
	 */
	@Nullable String remoteAddress();

	/**
	 * @param name a header name
	 * @return the header's first value, or null
	 */
	@Nullable String header(String name);

	/** @return the authenticated principal, or null */
	@Nullable Principal principal();

	/**
	 * @param name the name of a servlet request attribute or exchange attribute
	 * @return its value, or null
	 */
	@Nullable Object attribute(String name);

	/** @return the {@code HttpServletRequest} or {@code ServerWebExchange} */
	Object nativeRequest();

}
