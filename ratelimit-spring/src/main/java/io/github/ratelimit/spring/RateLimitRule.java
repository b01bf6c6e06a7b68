package io.github.ratelimit.spring;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** A filter rule: requests matching one of its paths and methods (none: all) get the named policies. */
public record RateLimitRule(List<PathPattern> paths, Set<String> methods, List<String> policies) {

	private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	public RateLimitRule {
		paths = List.copyOf(paths);
		for (String method : methods) {
			if (!METHODS.contains(method.toUpperCase(Locale.ROOT))) {
				throw new IllegalArgumentException("'" + method + "' is not an HTTP method; expected one of " + METHODS);
			}
		}
		methods = methods.stream().map((method) -> method.toUpperCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
		policies = List.copyOf(policies);
	}

	/** A rule of path patterns such as {@code /api/**}; a {@code PatternParseException} for an invalid one. */
	public static RateLimitRule of(List<String> paths, Set<String> methods, List<String> policies) {
		for (String path : paths) {
			if (!path.startsWith("/")) {
				throw new IllegalArgumentException("path pattern '" + path + "' must start with '/'");
			}
		}
		return new RateLimitRule(paths.stream().map(PathPatternParser.defaultInstance::parse).toList(), methods,
				policies);
	}

	/** Whether the rule applies to a request's method and path within the application. */
	public boolean matches(String method, PathContainer path) {
		if (!this.methods.isEmpty()) {
			String upper = method.toUpperCase(Locale.ROOT);
			// HEAD runs the GET handler: a rule for GET covers it
			if (!this.methods.contains(upper) && !(upper.equals("HEAD") && this.methods.contains("GET"))) {
				return false;
			}
		}
		for (PathPattern pattern : this.paths) { // a loop: asked of every request
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

}
