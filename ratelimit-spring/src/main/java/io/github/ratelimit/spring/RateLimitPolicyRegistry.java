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

/** The configured and inline policies by name, and the one place that says which limits apply to an identity. */
public final class RateLimitPolicyRegistry {

	private final Map<String, ConfiguredPolicy> policies;

	private final Map<String, ConfiguredPolicy> inline = new ConcurrentHashMap<>();

	private final RateLimitOverrides overrides;

	/** A registry without runtime overrides; of two policies of one name the later is kept. */
	public RateLimitPolicyRegistry(Collection<ConfiguredPolicy> policies) {
		this(policies, RateLimitOverrides.inMemory());
	}

	/** A registry of configured policies, in the given order, with runtime overrides applied on top of them. */
	public RateLimitPolicyRegistry(Collection<ConfiguredPolicy> policies, RateLimitOverrides overrides) {
		Map<String, ConfiguredPolicy> byName = new LinkedHashMap<>();
		policies.forEach((policy) -> byName.put(policy.name(), policy));
		this.policies = Collections.unmodifiableMap(byName);
		this.overrides = overrides;
	}

	/**
	 * The policy that applies to an identity ({@link ConfiguredPolicy#overrideKey}): its configured override, else the
	 * request's tier (no request: none), else the policy's own; then the policy's runtime override, then the
	 * identity's, each replacing only the values it sets. A tier's policy names its tier
	 * ({@link RateLimitPolicy#tier()}), and so does what a runtime override makes of it; the others name none.
	 */
	public RateLimitPolicy effective(ConfiguredPolicy configured, String overrideKey, @Nullable RequestContext request) {
		KeySpec tier = configured.tier();
		String tierName = null;
		if (tier != null && request != null && !configured.overrides().containsKey(overrideKey)) {
			tierName = tier.resolve(request);
		}
		return effectiveInTier(configured, overrideKey, tierName);
	}

	/**
	 * The policy that applies to an identity whose tier is already known (the one recorded with a denial; null:
	 * none), in {@link #effective}'s order: its configured override, else the tier's, else the policy's own; then the
	 * runtime overrides.
	 */
	public RateLimitPolicy effectiveInTier(ConfiguredPolicy configured, String overrideKey, @Nullable String tier) {
		RateLimitPolicy policy = configured.overrides().get(overrideKey);
		if (policy == null && tier != null) {
			policy = configured.tiers().get(tier);
		}
		return this.overrides.apply((policy != null) ? policy : configured.policy(), overrideKey);
	}

	/** The runtime overrides applied on top of the policies. */
	public RateLimitOverrides overrides() {
		return this.overrides;
	}

	/** Registers an inline {@link RateLimited} policy; the first of a name is kept. */
	void register(ConfiguredPolicy policy) {
		this.inline.putIfAbsent(policy.name(), policy);
	}

	/** The configured policy of that name; an {@link IllegalArgumentException} names the configured ones. */
	public ConfiguredPolicy configured(String name) {
		ConfiguredPolicy policy = this.policies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException(
					"Unknown rate-limit policy '" + name + "'; configured policies: " + names());
		}
		return policy;
	}

	/** The engine policy of a configured policy; fails as {@link #configured} does. */
	public RateLimitPolicy get(String name) {
		return configured(name).policy();
	}

	/** A policy by name: a configured one, else an inline one registered so far, else null. */
	public @Nullable ConfiguredPolicy find(String name) {
		ConfiguredPolicy configured = this.policies.get(name);
		return (configured != null) ? configured : this.inline.get(name);
	}

	/** Whether a policy of that name is configured. */
	public boolean contains(String name) {
		return this.policies.containsKey(name);
	}

	/** The names of the configured policies, in configuration order. */
	public Set<String> names() {
		return this.policies.keySet();
	}

	/** Every policy: the configured ones in order, then the inline ones registered so far. */
	public Collection<ConfiguredPolicy> all() {
		List<ConfiguredPolicy> all = new ArrayList<>(this.policies.values());
		all.addAll(this.inline.values());
		return all;
	}

}
