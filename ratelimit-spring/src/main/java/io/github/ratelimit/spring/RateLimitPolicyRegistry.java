package io.github.ratelimit.spring;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The configured policies of an application, by name: what filter rules and {@link RateLimited} annotations name.
 * The auto-configuration builds it from {@code ratelimit.policies}; the {@link RateLimitEnforcer} looks policies up
 * in it.
 */
public final class RateLimitPolicyRegistry {

	private final Map<String, ConfiguredPolicy> policies;

	private final RateLimitOverrides overrides;

	/**
	 * A registry of policies, in the given order, without runtime overrides. Of two policies with the same name the
	 * later one is kept.
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
	 * The policy that applies to an identity: its configured override, else its tier's policy, else the base
	 * policy; then the runtime overrides of the policy and of the identity.
	 * @param configured the configured policy
	 * @param identity the resolved identity
	 * @param request the request (for the tier)
	 * @return the policy to enforce
	 */
	public RateLimitPolicy effective(ConfiguredPolicy configured, String identity, RequestContext request) {
		return this.overrides.apply(configured.effective(identity, request), identity);
	}

	/**
	 * The policy that applies to an identity outside a request, so without a tier: its configured override, else the
	 * base policy; then the runtime overrides of the policy and of the identity. For tools that read or reset one
	 * identity (the Actuator endpoint, tests).
	 * @param configured the configured policy
	 * @param identity the identity
	 * @return the policy a request of that identity without a tier gets
	 */
	public RateLimitPolicy effective(ConfiguredPolicy configured, String identity) {
		return this.overrides.apply(configured.overrides().getOrDefault(identity, configured.policy()), identity);
	}

	/**
	 * The runtime overrides applied on top of the configured policies.
	 * @return the overrides
	 */
	public RateLimitOverrides overrides() {
		return this.overrides;
	}

	/**
	 * The configured policy of that name (key, overrides, tiers).
	 * @param name the policy name
	 * @return the configured policy
	 * @throws IllegalArgumentException naming the configured policies when there is none of that name
	 */
	public ConfiguredPolicy configured(String name) {
		ConfiguredPolicy policy = find(name);
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
	 * The configured policy of that name, if there is one.
	 * @param name the policy name
	 * @return the configured policy, or null
	 */
	public @Nullable ConfiguredPolicy find(String name) {
		return this.policies.get(name);
	}

	/**
	 * Whether a policy of that name is configured.
	 * @param name the policy name
	 * @return true when there is one
	 */
	public boolean contains(String name) {
		return this.policies.containsKey(name);
	}

	/**
	 * The names of the configured policies, in configuration order.
	 * @return the names
	 */
	public Set<String> names() {
		return this.policies.keySet();
	}

	/**
	 * All configured policies, in configuration order.
	 * @return the policies
	 */
	public Collection<ConfiguredPolicy> all() {
		return this.policies.values();
	}

}
