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

	/**
	 * A registry of policies, in the given order. Of two policies with the same name the later one is kept.
	 * @param policies the configured policies
	 */
	public RateLimitPolicyRegistry(Collection<ConfiguredPolicy> policies) {
		Map<String, ConfiguredPolicy> byName = new LinkedHashMap<>();
		policies.forEach((policy) -> byName.put(policy.name(), policy));
		this.policies = Collections.unmodifiableMap(byName);
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
