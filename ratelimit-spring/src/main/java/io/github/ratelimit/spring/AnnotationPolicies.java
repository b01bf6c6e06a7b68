package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;

/** The {@link RateLimited} policies of methods, validated and resolved once per method and class. */
final class AnnotationPolicies {

	private final RateLimitPolicyRegistry policies;

	private final Function<String, KeyResolver> keyResolverBeans;

	private final FailureMode defaultFailureMode;

	private final ConcurrentMap<MethodClassKey, List<RateLimitEnforcer.Target>> resolved = new ConcurrentHashMap<>();

	AnnotationPolicies(RateLimitPolicyRegistry policies, Function<String, KeyResolver> keyResolverBeans,
			FailureMode defaultFailureMode) {
		this.policies = policies;
		this.keyResolverBeans = keyResolverBeans;
		this.defaultFailureMode = defaultFailureMode;
	}

	/** The targets of a method (its own annotations and its class's); throws naming the method when invalid. */
	List<RateLimitEnforcer.Target> targets(Method method, Class<?> targetClass) {
		// keyed by class too: an inherited method gets the class-level policies of each subclass
		return this.resolved.computeIfAbsent(new MethodClassKey(method, targetClass),
				(key) -> resolve(ClassUtils.getMostSpecificMethod(method, targetClass), targetClass));
	}

	/** The annotations of a method: its class's, then its own (also on interfaces, and as meta-annotations). */
	private static Set<RateLimited> annotations(Method method, Class<?> targetClass) {
		Set<RateLimited> annotations = new LinkedHashSet<>(AnnotatedElementUtils.findMergedRepeatableAnnotations(
				ClassUtils.getUserClass(targetClass), RateLimited.class, RateLimited.List.class));
		annotations.addAll(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimited.class, RateLimited.List.class));
		return annotations;
	}

	private List<RateLimitEnforcer.Target> resolve(Method method, Class<?> targetClass) {
		String where = "@RateLimited on " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
		return annotations(method, targetClass).stream()
			.map((annotation) -> toTarget(annotation, where, targetClass))
			.toList();
	}

	private RateLimitEnforcer.Target toTarget(RateLimited annotation, String where, Class<?> targetClass) {
		ConfiguredPolicy policy;
		if (!annotation.policy().isEmpty()) {
			policy = named(annotation, where);
		}
		else if (!annotation.name().isEmpty()) {
			policy = inline(annotation, where);
		}
		else {
			throw new IllegalStateException(
					where + " must name a configured policy or define one inline (name, algorithm, limit, window)");
		}
		KeySpec key = null;
		if (!annotation.key().isEmpty()) {
			try {
				key = KeySpec.parse(annotation.key(), this.keyResolverBeans);
			}
			catch (RuntimeException ex) {
				throw new IllegalStateException(where + " has an invalid key: " + ex.getMessage(), ex);
			}
		}
		if (annotation.policy().isEmpty()) {
			if (key != null) {
				// the annotation's key is the inline policy's own (what the Actuator endpoint and tests resolve by)
				policy = ConfiguredPolicy.of(policy.policy(), key, policy.missingKey());
			}
			this.policies.register(policy);
		}
		if (annotation.cost() < 0 || annotation.cost() > policy.policy().capacity()) {
			throw new IllegalStateException(where + " has cost " + annotation.cost() + "; it must be between 1 and "
					+ policy.policy().capacity() + " (or 0 for the policy's cost)");
		}
		String maxWait = annotation.maxWait().trim();
		return new RateLimitEnforcer.Target(policy, key, annotation.cost(), annotation.shadow(),
				maxWait.isEmpty() ? null : parseMaxWait(where, maxWait, targetClass));
	}

	private static Duration parseMaxWait(String where, String value, Class<?> targetClass) {
		Duration wait;
		try {
			wait = DurationFormatterUtils.detectAndParse(value);
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException(where + " has an invalid maxWait '" + value + "': " + ex.getMessage(), ex);
		}
		if (wait.isNegative()) {
			throw new IllegalStateException(where + " has a negative maxWait '" + value + "'");
		}
		if (RateLimitedCallInterceptor.isController(targetClass)) {
			throw new IllegalStateException(where + " sets maxWait, but a controller's denials are answered with "
					+ "429 at once: rate-limit the bean the controller calls to make that call wait");
		}
		return wait;
	}

	private ConfiguredPolicy named(RateLimited annotation, String where) {
		if (!annotation.name().isEmpty() || annotation.algorithm().length > 0 || annotation.limit() != 0
				|| !annotation.window().isEmpty() || annotation.failureMode().length > 0) {
			throw new IllegalStateException(where + " names policy '" + annotation.policy()
					+ "' and also defines one inline (name, algorithm, limit, window, failureMode): use one or the other");
		}
		if (!this.policies.contains(annotation.policy())) {
			throw new IllegalStateException(where + " names unknown policy '" + annotation.policy()
					+ "'; configured policies: " + this.policies.names());
		}
		return this.policies.configured(annotation.policy());
	}

	private ConfiguredPolicy inline(RateLimited annotation, String where) {
		if (this.policies.contains(annotation.name())) {
			throw new IllegalStateException(where + " defines inline policy '" + annotation.name()
					+ "', which is also a configured policy: use @RateLimited(\"" + annotation.name() + "\")");
		}
		try {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(annotation.name()).limit(annotation.limit());
			builder.algorithm(one(annotation.name(), "algorithm", annotation.algorithm(), null));
			if (!annotation.window().isEmpty()) {
				// ISO-8601 (PT1M), simple (500ms, 10s) or composite (1h30m); a plain number is milliseconds
				builder.window(DurationFormatterUtils.detectAndParse(annotation.window().trim()));
			}
			if (annotation.burst() != 0) {
				builder.burst(annotation.burst());
			}
			builder.failureMode(
					one(annotation.name(), "failureMode", annotation.failureMode(), this.defaultFailureMode));
			return ConfiguredPolicy.of(builder.build(), KeySpec.parse("ip", this.keyResolverBeans), MissingKey.SHARED);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(where + ": " + ex.getMessage(), ex);
		}
	}

	/** The one value of an annotation's array attribute, or what applies when it has none (null: required). */
	private static <T> T one(String policy, String field, T[] values, @Nullable T none) {
		if (values.length > 1) {
			throw new InvalidPolicyException(policy, field, "takes one value, not " + values.length);
		}
		if (values.length == 1) {
			return values[0];
		}
		if (none == null) {
			throw new InvalidPolicyException(policy, field, "is required");
		}
		return none;
	}

}
