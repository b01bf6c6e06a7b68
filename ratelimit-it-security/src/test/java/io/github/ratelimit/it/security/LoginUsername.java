package io.github.ratelimit.it.security;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.RequestContext;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * The username a login attempt claims, before anyone checked it: the {@code username} parameter of a form login, or
 * the user of an HTTP Basic {@code Authorization} header. Lower-cased, so that case variants of one name share its
 * quota. Requests that claim no username resolve to null ({@code missing-key: skip}).
 */
@Component("loginUsername")
public class LoginUsername implements KeyResolver {

	@Override
	public @Nullable String resolve(RequestContext request) {
		if (request.nativeRequest() instanceof HttpServletRequest servlet && "POST".equals(servlet.getMethod())) {
			String username = servlet.getParameter("username");
			if (username != null) {
				return username.toLowerCase(Locale.ROOT);
			}
		}
		String authorization = request.header("Authorization");
		if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
			return null;
		}
		try {
			String credentials = new String(Base64.getDecoder().decode(authorization.substring(6).trim()),
					StandardCharsets.UTF_8);
			int colon = credentials.indexOf(':');
			return (colon > 0) ? credentials.substring(0, colon).toLowerCase(Locale.ROOT) : null;
		}
		catch (IllegalArgumentException ex) {
			return null; // not Base64: Spring Security refuses it anyway
		}
	}

}
