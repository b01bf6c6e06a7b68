package io.github.ratelimit.spring.servlet;

import java.security.Principal;

import io.github.ratelimit.spring.RequestContext;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.ServletRequestPathUtils;

/**
 * A {@link RequestContext} over an {@link HttpServletRequest}.
 * <p>
 * The client address is {@link HttpServletRequest#getRemoteAddr()} and nothing else: headers such as
 * {@code X-Forwarded-For} are never read here, since any client can set them. Behind trusted proxies, Spring Boot's
 * {@code server.forward-headers-strategy} (or the container's remote-IP valve) already puts the real client address
 * into {@code getRemoteAddr()} before this runs.
 */
final class ServletRequestContext implements RequestContext {

	private final HttpServletRequest request;

	private @Nullable String path;

	ServletRequestContext(HttpServletRequest request) {
		this.request = request;
	}

	/**
	 * The path within the application: the request URI without the context path and, when the DispatcherServlet is
	 * mapped to a path ({@code spring.mvc.servlet.path}), without that prefix too, still encoded, as Spring MVC
	 * matches it against {@code PathPattern}s (matching decodes each segment and drops path parameters such as
	 * {@code ;jsessionid}).
	 * @param request the request
	 * @return the path within the application, e.g. {@code /api/orders/42}
	 */
	static String pathWithinApplication(HttpServletRequest request) {
		return ServletRequestPathUtils.parse(request).pathWithinApplication().value();
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public String path() {
		String path = this.path;
		if (path == null) {
			path = pathWithinApplication(this.request);
			this.path = path;
		}
		return path;
	}

	@Override
	public @Nullable String remoteAddress() {
		return this.request.getRemoteAddr();
	}

	@Override
	public @Nullable String header(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public @Nullable Principal principal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	public HttpServletRequest nativeRequest() {
		return this.request;
	}

	@Override
	public String requestPath() {
		return this.request.getRequestURI();
	}

	@Override
	public String toString() {
		return "ServletRequestContext[" + method() + " " + path() + "]";
	}

}
