package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Objects;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * A parsed key specification: {@code ip}, {@code header:<Name>}, {@code principal}, {@code global},
 * {@code @beanName} (a {@link KeyResolver} bean) or a SpEL expression. SpEL runs in a read-only context (no type
 * references, no bean access, no assignment) with the variables {@code #request} ({@link RequestContext}),
 * {@code #principal}, and, for {@link RateLimited} methods, each parameter by name and {@code #args}.
 */
public final class KeySpec {

	/** The identity of the {@code global} key: one counter for all requests. */
	public static final String GLOBAL = "global";

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private final String spec;

	private final @Nullable KeyResolver resolver;

	private final @Nullable Expression expression;

	private KeySpec(String spec, @Nullable KeyResolver resolver, @Nullable Expression expression) {
		this.spec = spec;
		this.resolver = resolver;
		this.expression = expression;
	}

	/**
	 * Parses a key specification.
	 * @param spec the specification
	 * @param beans looks up a {@link KeyResolver} bean by name (for {@code @name})
	 * @return the parsed key
	 * @throws IllegalArgumentException with the reason when the specification is invalid
	 */
	public static KeySpec parse(String spec, Function<String, KeyResolver> beans) {
		String trimmed = spec.trim();
		if (trimmed.isEmpty()) {
			throw new IllegalArgumentException("key must not be empty");
		}
		switch (trimmed) {
			case "ip":
				return new KeySpec(trimmed, RequestContext::remoteAddress, null);
			case "principal":
				return new KeySpec(trimmed, (request) -> {
					Principal principal = request.principal();
					return (principal != null) ? principal.getName() : null;
				}, null);
			case GLOBAL:
				return new KeySpec(trimmed, (request) -> GLOBAL, null);
			default:
				break;
		}
		if (trimmed.regionMatches(true, 0, "header:", 0, 7)) {
			String header = trimmed.substring(7).trim();
			if (header.isEmpty() || !header.chars().allMatch(KeySpec::isTokenChar)) {
				throw new IllegalArgumentException("'" + trimmed + "' does not name a valid header");
			}
			return new KeySpec(trimmed, (request) -> request.header(header), null);
		}
		if (trimmed.startsWith("@") && trimmed.length() > 1 && trimmed.indexOf(' ') < 0) {
			String bean = trimmed.substring(1);
			KeyResolver resolver = beans.apply(bean);
			return new KeySpec(trimmed, resolver, null);
		}
		try {
			return new KeySpec(trimmed, null, PARSER.parseExpression(trimmed));
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException("'" + trimmed + "' is not ip, header:<Name>, principal, global, "
					+ "@<KeyResolver bean> nor a valid SpEL expression: " + ex.getMessage(), ex);
		}
	}

	private static boolean isTokenChar(int c) {
		return c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0;
	}

	/**
	 * Resolves the identity of a request.
	 * @param request the request
	 * @return the identity or null when the request has none
	 */
	public @Nullable String resolve(RequestContext request) {
		return resolve(request, null, null);
	}

	/**
	 * Resolves the identity of a call of a {@link RateLimited} method.
	 * @param request the request
	 * @param method the method, or null outside a method call
	 * @param args the arguments of the call, or null
	 * @return the identity or null when the request has none (also when the expression yields null or empty)
	 * @throws IllegalStateException when the expression fails, naming the expression
	 */
	public @Nullable String resolve(RequestContext request, @Nullable Method method, @Nullable Object @Nullable [] args) {
		if (this.resolver != null) {
			return emptyToNull(this.resolver.resolve(request));
		}
		SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
			.withInstanceMethods()
			.withRootObject(request)
			.build();
		context.setVariable("request", request);
		context.setVariable("principal", request.principal());
		if (method != null && args != null) {
			context.setVariable("args", args);
			@Nullable String @Nullable [] names = PARAMETER_NAMES.getParameterNames(method);
			for (int i = 0; i < args.length; i++) {
				context.setVariable("p" + i, args[i]);
				if (names != null && i < names.length && names[i] != null) {
					context.setVariable(names[i], args[i]);
				}
			}
		}
		try {
			Object value = Objects.requireNonNull(this.expression).getValue(context);
			return (value != null) ? emptyToNull(value.toString()) : null;
		}
		catch (EvaluationException ex) {
			throw new IllegalStateException("Rate-limit key expression '" + this.spec + "' failed: " + ex.getMessage(),
					ex);
		}
	}

	private static @Nullable String emptyToNull(@Nullable String value) {
		return (value == null || value.isEmpty()) ? null : value;
	}

	@Override
	public String toString() {
		return this.spec;
	}

}
