package io.github.ratelimit.spring.servlet;

import java.security.Principal;

import io.github.ratelimit.spring.RequestContext;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.ServletRequestPathUtils;

/** A {@link RequestContext} over an {@link HttpServletRequest}; the client address is {@code getRemoteAddr()}. */
final class ServletRequestContext implements RequestContext {

	private final HttpServletRequest request;

	private @Nullable PathContainer path;

	ServletRequestContext(HttpServletRequest request) {
		this.request = request;
	}

	/** The path as Spring MVC matches it: without the context and servlet paths, still encoded. */
	static String pathWithinApplication(HttpServletRequest request) {
		return ServletRequestPathUtils.parse(request).pathWithinApplication().value();
	}

	/** {@link #path()} as Spring parsed it, parsed once per request (the filter rules match it). */
	PathContainer parsedPath() {
		PathContainer path = this.path;
		if (path == null) {
			path = ServletRequestPathUtils.parse(this.request).pathWithinApplication();
			this.path = path;
		}
		return path;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public String path() {
		return parsedPath().value();
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
