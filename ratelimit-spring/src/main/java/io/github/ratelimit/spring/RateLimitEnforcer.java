package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;

/**
 * Decides web requests: which policies apply (filter rules and {@link RateLimited} methods), for which identity,
 * at which limits (overrides, tiers), and what the response carries. Shared by the servlet and WebFlux filters and
 * method interceptors, which only adapt their request type to {@link RequestContext}.
 */
public final class RateLimitEnforcer {

	/**
	 * The default order of the servlet and the WebFlux filter: just after Spring Security's filter chain
	 * ({@code -100}), so that principal keys see the authenticated user.
	 */
	public static final int DEFAULT_FILTER_ORDER = -90;

	private final RateLimiter limiter;

	private final RateLimitPolicyRegistry policies;

	private final List<RateLimitRule> rules;

	private final RateLimitHeaders headers;

	private final RateLimitRejectionHandler rejectionHandler;

	private final Function<String, KeyResolver> keyResolverBeans;

	private final LongSupplier clockMillis;

	private final FailureMode defaultFailureMode;

	private final ConcurrentMap<MethodClassKey, List<Target>> annotated = new ConcurrentHashMap<>();

	/**
	 * An enforcer over the given policies, whose inline {@link RateLimited} policies fail open unless they set a
	 * failure mode.
	 * @param limiter the engine
	 * @param policies the configured policies
	 * @param rules the filter rules (their policy names must exist)
	 * @param headers which headers to write
	 * @param rejectionHandler renders denials
	 * @param keyResolverBeans finds {@link KeyResolver} beans named in annotation keys ({@code @name})
	 * @param clockMillis the clock for {@code X-RateLimit-Reset}
	 * @throws IllegalArgumentException when a rule names an unknown policy
	 */
	public RateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies, List<RateLimitRule> rules,
			RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler,
			Function<String, KeyResolver> keyResolverBeans, LongSupplier clockMillis) {
		this(limiter, policies, rules, headers, rejectionHandler, keyResolverBeans, clockMillis, FailureMode.OPEN);
	}

	/**
	 * An enforcer.
	 * @param limiter the engine
	 * @param policies the configured policies
	 * @param rules the filter rules (their policy names must exist)
	 * @param headers which headers to write
	 * @param rejectionHandler renders denials
	 * @param keyResolverBeans finds {@link KeyResolver} beans named in annotation keys ({@code @name})
	 * @param clockMillis the clock for {@code X-RateLimit-Reset}
	 * @param defaultFailureMode the failure mode of inline {@link RateLimited} policies that set none
	 * @throws IllegalArgumentException when a rule names an unknown policy
	 */
	public RateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies, List<RateLimitRule> rules,
			RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler,
			Function<String, KeyResolver> keyResolverBeans, LongSupplier clockMillis, FailureMode defaultFailureMode) {
		for (RateLimitRule rule : rules) {
			// fails here rather than on the first request the rule matches
			rule.policies().forEach(policies::configured);
		}
		this.defaultFailureMode = defaultFailureMode;
		this.limiter = limiter;
		this.policies = policies;
		this.rules = List.copyOf(rules);
		this.headers = headers;
		this.rejectionHandler = rejectionHandler;
		this.keyResolverBeans = keyResolverBeans;
		this.clockMillis = clockMillis;
	}

	/**
	 * One policy to apply to a request.
	 *
	 * @param policy the configured policy
	 * @param key a key replacing the policy's own, or null
	 * @param cost a cost replacing the policy's own, or 0
	 * @param shadow whether this use of the policy is in shadow mode even if the policy is not
	 */
	public record Target(ConfiguredPolicy policy, @Nullable KeySpec key, long cost, boolean shadow) {

		/**
		 * A target that uses the policy as configured, shadow mode included.
		 * @param policy the configured policy
		 * @param key a key replacing the policy's own, or null
		 * @param cost a cost replacing the policy's own, or 0
		 */
		public Target(ConfiguredPolicy policy, @Nullable KeySpec key, long cost) {
			this(policy, key, cost, false);
		}

	}

	/**
	 * Whether any filter rule exists.
	 * @return true when rules are configured
	 */
	public boolean hasRules() {
		return !this.rules.isEmpty();
	}

	/**
	 * The policies of the filter rules matching a request, each once, in rule order.
	 * @param method the HTTP method
	 * @param path the path within the application
	 * @return the targets
	 */
	public List<Target> ruleTargets(String method, String path) {
		if (this.rules.isEmpty()) {
			return List.of();
		}
		// "//api/x" reaches the same handler as "/api/x" under some matching strategies: match it the same way
		PathContainer container = PathContainer.parsePath(path.contains("//") ? path.replaceAll("/{2,}", "/") : path);
		Set<String> names = new LinkedHashSet<>();
		for (RateLimitRule rule : this.rules) {
			if (rule.matches(method, container)) {
				names.addAll(rule.policies());
			}
		}
		List<Target> targets = new ArrayList<>(names.size());
		names.forEach((name) -> targets.add(new Target(this.policies.configured(name), null, 0)));
		return targets;
	}

	/**
	 * The {@link RateLimited} policies of a method (its own and its class's), resolved once per method.
	 * @param method the handler method
	 * @param targetClass the class of the handler bean
	 * @return the targets, empty when the method is not rate-limited
	 * @throws IllegalStateException naming the method when an annotation is invalid
	 */
	public List<Target> annotationTargets(Method method, Class<?> targetClass) {
		// keyed by class too: an inherited method gets the class-level policies of each subclass
		return this.annotated.computeIfAbsent(new MethodClassKey(method, targetClass),
				(key) -> resolveAnnotations(ClassUtils.getMostSpecificMethod(method, targetClass), targetClass));
	}

	private List<Target> resolveAnnotations(Method method, Class<?> targetClass) {
		Set<RateLimited> annotations = new LinkedHashSet<>(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(ClassUtils.getUserClass(targetClass),
						RateLimited.class, RateLimited.List.class));
		annotations.addAll(
				AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimited.class, RateLimited.List.class));
		List<Target> targets = new ArrayList<>();
		for (RateLimited annotation : annotations) {
			String where = "@RateLimited on " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
			targets.add(toTarget(annotation, where));
		}
		return List.copyOf(targets);
	}

	private Target toTarget(RateLimited annotation, String where) {
		ConfiguredPolicy policy;
		if (!annotation.policy().isEmpty()) {
			if (!annotation.name().isEmpty() || annotation.algorithm().length > 0 || annotation.limit() != 0
					|| !annotation.window().isEmpty() || annotation.failureMode().length > 0) {
				throw new IllegalStateException(where + " names policy '" + annotation.policy()
						+ "' and also defines one inline (name, algorithm, limit, window, failureMode): use one or the other");
			}
			if (!this.policies.contains(annotation.policy())) {
				throw new IllegalStateException(where + " names unknown policy '" + annotation.policy()
						+ "'; configured policies: " + this.policies.names());
			}
			policy = this.policies.configured(annotation.policy());
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
		return new Target(policy, key, annotation.cost(), annotation.shadow());
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

	/**
	 * Evaluates targets for a request, blocking.
	 * @param request the request
	 * @param targets the policies to apply
	 * @param method the rate-limited method, or null in a filter
	 * @param args its arguments, or null
	 * @return the decision
	 */
	public RateLimitDecision check(RequestContext request, List<Target> targets, @Nullable Method method,
			@Nullable Object @Nullable [] args) {
		Prepared prepared = prepare(request, targets, method, args);
		return (prepared.denied != null) ? prepared.denied : this.limiter.check(prepared.request);
	}

	/**
	 * Evaluates targets for a request without blocking.
	 * @param request the request
	 * @param targets the policies to apply
	 * @param method the rate-limited method, or null in a filter
	 * @param args its arguments, or null
	 * @return the decision
	 */
	public Mono<RateLimitDecision> checkAsync(RequestContext request, List<Target> targets, @Nullable Method method,
			@Nullable Object @Nullable [] args) {
		return Mono.defer(() -> {
			Prepared prepared = prepare(request, targets, method, args);
			return (prepared.denied != null) ? Mono.just(prepared.denied) : this.limiter.checkAsync(prepared.request);
		});
	}

	private Prepared prepare(RequestContext request, List<Target> targets, @Nullable Method method,
			@Nullable Object @Nullable [] args) {
		RateLimitRequest.Builder builder = RateLimitRequest.builder();
		List<PolicyDecision> denied = new ArrayList<>();
		RateLimitOverrides overrides = this.policies.overrides();
		for (Target target : targets) {
			ConfiguredPolicy configured = target.policy();
			if (!overrides.enforced(configured.name())) {
				continue; // switched off at runtime: unchecked, uncounted
			}
			KeySpec key = (target.key() != null) ? target.key() : configured.key();
			String value = key.resolve(request, method, args);
			String identity;
			if (value == null) {
				switch (configured.missingKey()) {
					case SKIP:
						continue;
					case DENY:
						if (target.shadow() || configured.policy().shadow()) {
							continue; // a shadow policy never denies
						}
						// a client error, not a quota: no figures, no Retry-After (RateLimitHeaders, rejection handler)
						RateLimitPolicy policy = configured.policy();
						denied.add(PolicyDecision.of(
								new RateLimitRequest.Entry(policy, MissingKey.denied(key), policy.cost()), false, 0, 0,
								0));
						continue;
					default:
						identity = MissingKey.ANONYMOUS;
				}
			}
			else {
				// qualified by its source: another key resolving the same value counts separately
				identity = key.identity(value);
			}
			RateLimitPolicy effective = this.policies.effective(configured,
					(value != null) ? configured.overrideKey(key.source(), value, identity) : identity, request);
			if (target.shadow() && !effective.shadow()) {
				effective = effective.toBuilder().shadow(true).build();
			}
			builder.add(effective, identity, (target.cost() > 0) ? Math.min(target.cost(), effective.capacity())
					: effective.cost());
		}
		return new Prepared(builder.build(), denied.isEmpty() ? null : new RateLimitDecision(denied, Permit.NONE));
	}

	private record Prepared(RateLimitRequest request, @Nullable RateLimitDecision denied) {
	}

	/**
	 * The rate-limit headers of a decision, as enabled.
	 * @param decision the decision
	 * @return the headers
	 */
	public HttpHeaders headers(RateLimitDecision decision) {
		return this.headers.of(decision, this.clockMillis.getAsLong());
	}

	/**
	 * The response to a denial.
	 * @param decision the denying decision
	 * @param request the request
	 * @return the rejection
	 */
	public Rejection reject(RateLimitDecision decision, RequestContext request) {
		return this.rejectionHandler.reject(decision, request, headers(decision));
	}

}
