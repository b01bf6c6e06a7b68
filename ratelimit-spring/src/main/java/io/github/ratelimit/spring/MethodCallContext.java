package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.security.Principal;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/** What key resolvers see of a call outside a web request: only the calling thread's Spring Security user. */
final class MethodCallContext implements RequestContext {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder", MethodCallContext.class.getClassLoader());

	private final MethodInvocation invocation;

	private final @Nullable Principal principal;

	/** Takes the principal from the calling thread now: a call that waits may be checked again on another thread. */
	MethodCallContext(MethodInvocation invocation) {
		this.invocation = invocation;
		this.principal = SECURITY_PRESENT ? SecurityPrincipal.current() : null;
	}

	@Override
	public String method() {
		return "CALL";
	}

	@Override
	public String path() {
		Method method = this.invocation.getMethod();
		return method.getDeclaringClass().getSimpleName() + "." + method.getName();
	}

	@Override
	public @Nullable String remoteAddress() {
		return null;
	}

	@Override
	public @Nullable String header(String name) {
		return null;
	}

	@Override
	public @Nullable Principal principal() {
		return this.principal;
	}

	@Override
	public @Nullable Object attribute(String name) {
		return null;
	}

	@Override
	public Object nativeRequest() {
		return this.invocation;
	}

	@Override
	public String toString() {
		return "MethodCallContext[" + path() + "]";
	}

	/** Kept apart so that the class loads without Spring Security. */
	private static final class SecurityPrincipal {

		static @Nullable Principal current() {
			Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
			return (authentication != null && authentication.isAuthenticated()
					&& !(authentication instanceof AnonymousAuthenticationToken)) ? authentication : null;
		}

	}

}
