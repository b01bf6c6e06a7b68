package io.github.ratelimit.spring;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/**
 * What key resolvers see of a request, the same for servlet and WebFlux. Exposed to SpEL key expressions as
 * {@code #request}.
 */
public interface RequestContext {

	/**
	 * The HTTP method, e.g. {@code GET}.
	 * @return the method
	 */
	String method();

	/**
	 * The path within the application (without the context path).
	 * @return the path
	 */
	String path();

	/**
	 * The request's path as the client sent it, with the context path: what the problem body's {@code instance}
	 * names.
	 * @return the full request path
	 */
	default String requestPath() {
		return path();
	}

	/**
	 * The client address as the server sees it: the connection's peer, or what Spring Boot's forwarded-header
	 * handling ({@code server.forward-headers-strategy}) made of trusted proxies' headers. Never parsed from a
	 * header by the rate limiter itself.
	 * @return the client IP address, or null when unknown
	 */
	@Nullable String remoteAddress();

	/**
	 * The first value of a request header.
	 * @param name the header name
	 * @return the value or null
	 */
	@Nullable String header(String name);

	/**
	 * The authenticated principal, when there is one.
	 * @return the principal or null
	 */
	@Nullable Principal principal();

	/**
	 * A request attribute (servlet request attribute or exchange attribute).
	 * @param name the attribute name
	 * @return the value or null
	 */
	@Nullable Object attribute(String name);

	/**
	 * The underlying request ({@code HttpServletRequest} or {@code ServerWebExchange}).
	 * @return the native request
	 */
	Object nativeRequest();

}
