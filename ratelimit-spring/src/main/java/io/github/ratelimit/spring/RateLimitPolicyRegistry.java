package io.github.ratelimit.spring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The policies of an application, by name, and the one place that says which limits apply to an identity: the
 * configured policies (what filter rules, gateway routes and {@link RateLimited} annotations name; the
 * auto-configuration builds them from {@code ratelimit.policies}) and the inline {@link RateLimited} policies,
 * registered as the {@link RateLimitEnforcer} resolves the annotated methods (public ones at startup, others on
 * their first call). The enforcer, the Actuator endpoint and the test support look policies up here.
 */
public final class RateLimitPolicyRegistry {

	private final Map<String, ConfiguredPolicy> policies;

	private final Map<String, ConfiguredPolicy> inline = new ConcurrentHashMap<>();

	private final RateLimitOverrides overrides;

	/**
	 * A registry without runtime overrides; of two policies of one name the later is kept.
	 * @param policies the configured policies
	 */
	public RateLimitPolicyRegistry(Collection<ConfiguredPolicy> policies) {
		this(policies, RateLimitOverrides.inMemory());
	}

	/**
	 * A registry of policies, in the given order, with runtime overrides.
	 * @param policies the configured policies
	 * @param overrides the runtime overrides applied on top of them
	 */
	public RateLimitPolicyRegistry(Collection<ConfiguredPolicy> policies, RateLimitOverrides overrides) {
		Map<String, ConfiguredPolicy> byName = new LinkedHashMap<>();
		policies.forEach((policy) -> byName.put(policy.name(), policy));
		this.policies = Collections.unmodifiableMap(byName);
		this.overrides = overrides;
	}

	/**
	 * The policy that applies to an identity, the one resolution every caller shares: the identity's configured
	 * override, else the request's tier, else the policy's own; then the policy's runtime override, then the
	 * identity's, each replacing only the values it sets.
	 * @param configured the policy
	 * @param overrideKey what its overrides are looked up by ({@link ConfiguredPolicy#overrideKey})
	 * @param request the request, for the tier; null outside a request (no tier)
	 * @return the policy to enforce
	 */
	public RateLimitPolicy effective(ConfiguredPolicy configured, String overrideKey, @Nullable RequestContext request) {
		RateLimitPolicy policy = configured.overrides().get(overrideKey);
		KeySpec tier = configured.tier();
		if (policy == null && tier != null && request != null) {
			String tierName = tier.resolve(request);
			policy = (tierName != null) ? configured.tiers().get(tierName) : null;
		}
		return this.overrides.apply((policy != null) ? policy : configured.policy(), overrideKey);
	}

	/** @return the runtime overrides applied on top of the policies */
	public RateLimitOverrides overrides() {
		return this.overrides;
	}

	/** Registers an inline {@link RateLimited} policy; the first of a name is kept. */
	void register(ConfiguredPolicy policy) {
		this.inline.putIfAbsent(policy.name(), policy);
	}

	/**
	 * The configured policy of that name (key, overrides, tiers).
	 * @param name the policy name
	 * @return the configured policy
	 * @throws IllegalArgumentException naming the configured policies when there is none of that name
	 */
	public ConfiguredPolicy configured(String name) {
		ConfiguredPolicy policy = this.policies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException(
					"Unknown rate-limit policy '" + name + "'; configured policies: " + names());
		}
		return policy;
	}

	/**
	 * The engine policy of that name.
	 * @param name the policy name
	 * @return the policy
	 * @throws IllegalArgumentException naming the configured policies when there is none of that name
	 */
	public RateLimitPolicy get(String name) {
		return configured(name).policy();
	}

	/**
	 * A policy by name: a configured one, else an inline one registered so far.
	 * @param name the policy name
	 * @return the policy, or null
	 */
	public @Nullable ConfiguredPolicy find(String name) {
		ConfiguredPolicy configured = this.policies.get(name);
		return (configured != null) ? configured : this.inline.get(name);
	}

	/**
	 * @param name the policy name
	 * @return whether a policy of that name is configured
	 */
	public boolean contains(String name) {
		return this.policies.containsKey(name);
	}

	/** @return the names of the configured policies, in configuration order */
	public Set<String> names() {
		return this.policies.keySet();
	}

	/** @return every policy: the configured ones in order, then the inline ones registered so far */
	public Collection<ConfiguredPolicy> all() {
		List<ConfiguredPolicy> all = new ArrayList<>(this.policies.values());
		all.addAll(this.inline.values());
		return all;
	}

}
