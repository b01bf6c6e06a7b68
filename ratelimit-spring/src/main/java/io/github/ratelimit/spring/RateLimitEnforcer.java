package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.http.server.PathContainer;

/**
 * Makes the check of a web request or a rate-limited call: which policies apply (the filter rules, or a method's
 * {@link RateLimited} annotations), the identity each counts (keys, missing keys, kill switches) and its limits
 * (overrides, tiers), then one call of the limiter. Shared by the filters, interceptors and the gateway.
 */
public final class RateLimitEnforcer {

	private static final Log logger = LogFactory.getLog(RateLimitEnforcer.class);

	private final RateLimiter limiter;

	private final RateLimitPolicyRegistry policies;

	private final FilterRules rules;

	private final AnnotationPolicies annotations;

	/** What hears of every decision, or null (no operator added to the check). */
	private final @Nullable Consumer<RateLimitDecision> decided;

	/**
	 * An enforcer; {@code keyResolverBeans} finds the {@code @name} resolvers of annotation keys, and inline
	 * {@link RateLimited} policies that set no failure mode get {@code defaultFailureMode}.
	 * @throws IllegalArgumentException when a rule names an unknown policy
	 */
	public RateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies, List<RateLimitRule> rules,
			Function<String, KeyResolver> keyResolverBeans, FailureMode defaultFailureMode) {
		this(limiter, policies, rules, keyResolverBeans, defaultFailureMode, null);
	}

	/**
	 * An enforcer that also hands every decision of the limiter to {@code decided} on the thread that receives it
	 * (the top denials record their refusals there: it must be quick and never block). What it throws is logged at
	 * debug level and never reaches the request.
	 * @throws IllegalArgumentException when a rule names an unknown policy
	 */
	public RateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies, List<RateLimitRule> rules,
			Function<String, KeyResolver> keyResolverBeans, FailureMode defaultFailureMode,
			@Nullable Consumer<RateLimitDecision> decided) {
		this.limiter = limiter;
		this.policies = policies;
		this.rules = new FilterRules(policies, rules);
		this.annotations = new AnnotationPolicies(policies, keyResolverBeans, defaultFailureMode);
		this.decided = (decided != null) ? heedless(decided) : null;
	}

	/** {@code decided}, its failures logged: recording a decision must not fail the request it decided. */
	private static Consumer<RateLimitDecision> heedless(Consumer<RateLimitDecision> decided) {
		return (decision) -> {
			try {
				decided.accept(decision);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not hand a rate-limit decision to its listener; the request goes on", ex);
			}
		};
	}

	/**
	 * One policy to apply to a request: a {@code key} (or null) and {@code cost} (or 0) replacing the policy's own,
	 * shadow mode for this use, and how long a bean method call may wait for its turn (null: the annotation sets no
	 * {@link RateLimited#maxWait()}).
	 */
	public record Target(ConfiguredPolicy policy, @Nullable KeySpec key, long cost, boolean shadow,
			@Nullable Duration maxWait) {

		/** A target that uses the policy as configured, shadow mode included. */
		public Target(ConfiguredPolicy policy, @Nullable KeySpec key, long cost) {
			this(policy, key, cost, false, null);
		}

	}

	/** The policies of the filter rules matching a request's method and path, each once, in rule order. */
	public List<Target> ruleTargets(String method, String path) {
		return this.rules.targets(method, path);
	}

	/** {@link #ruleTargets(String, String)} of a path Spring parsed already (the request's, within the application). */
	public List<Target> ruleTargets(String method, PathContainer path) {
		return this.rules.targets(method, path);
	}

	/**
	 * The {@link RateLimited} policies of a method (its own and its class's), resolved once per method and class.
	 * @throws IllegalStateException naming the method when an annotation is invalid
	 */
	public List<Target> annotationTargets(Method method, Class<?> targetClass) {
		return this.annotations.targets(method, targetClass);
	}

	/** Checks targets for a request without blocking; the method and its arguments are null in a filter. */
	public Mono<RateLimitDecision> checkAsync(RequestContext request, List<Target> targets, @Nullable Method method,
			@Nullable Object @Nullable [] args) {
		return Mono.defer(() -> resolved(request, targets, method, args));
	}

	/** Resolves keys and policies now, on the calling thread; each subscription checks the same request again. */
	Mono<RateLimitDecision> resolved(RequestContext request, List<Target> targets, @Nullable Method method,
			@Nullable Object @Nullable [] args) {
		return resolve(request, targets, method, args).async();
	}

	/**
	 * A request's keys and policies, resolved once: checked at once when the limiter can
	 * ({@link RateLimiter#checkAtOnce}), else without blocking; a missing key's denial needs no check.
	 */
	final class Resolved {

		private final RateLimitRequest request;

		private final @Nullable RateLimitDecision denied;

		/**
		 * Whether {@link #atOnce} asked the limiter and got null: {@link #async} does not ask at once again (its
		 * {@code Mono}, built once, does not either when subscribed again: a caller that retries resolves anew).
		 */
		private boolean askedAtOnce;

		private Resolved(RateLimitRequest request, @Nullable RateLimitDecision denied) {
			this.request = request;
			this.denied = denied;
		}

		/** {@return the decision made on the calling thread, else null, having taken nothing: then {@link #async}} */
		@Nullable RateLimitDecision atOnce() {
			return atOnce(null);
		}

		/**
		 * {@link #atOnce()} for a reactive caller: observed under its subscriber's context's observation.
		 * @param context the subscriber's Reactor context, null on a thread that waits (the thread's observation)
		 */
		@Nullable RateLimitDecision atOnce(@Nullable ContextView context) {
			if (this.denied != null) {
				return this.denied;
			}
			RateLimiter limiter = RateLimitEnforcer.this.limiter;
			RateLimitDecision decision = (context != null) ? limiter.checkAtOnce(this.request, context)
					: limiter.checkAtOnce(this.request);
			if (decision == null) {
				this.askedAtOnce = true;
			}
			else if (RateLimitEnforcer.this.decided != null) {
				RateLimitEnforcer.this.decided.accept(decision);
			}
			return decision;
		}

		/** {@return the decision, without blocking} */
		Mono<RateLimitDecision> async() {
			if (this.denied != null) {
				return Mono.just(this.denied);
			}
			RateLimiter limiter = RateLimitEnforcer.this.limiter;
			Mono<RateLimitDecision> checked = this.askedAtOnce ? limiter.checkAsyncAfterAtOnce(this.request) : null;
			if (checked == null) {
				// not asked at once, or a limiter answering null there (a test's mock stubbing checkAsync alone)
				checked = limiter.checkAsync(this.request);
			}
			Consumer<RateLimitDecision> decided = RateLimitEnforcer.this.decided;
			return (decided != null) ? checked.doOnNext(decided) : checked;
		}

	}

	/** Resolves keys and policies now, on the calling thread (key resolvers, overrides, shadow use). */
	Resolved resolve(RequestContext request, List<Target> targets, @Nullable Method method,
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
		RateLimitRequest checked = builder.build();
		return new Resolved(checked, denied.isEmpty() ? null : new RateLimitDecision(denied, Permit.NONE));
	}

}
