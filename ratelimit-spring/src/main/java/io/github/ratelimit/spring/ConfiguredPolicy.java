package io.github.ratelimit.spring;

import java.util.HashMap;
import java.util.Map;

import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy as configured: the engine policy, its key, what happens without one, and the policies replacing it for
 * specific identities ({@code overrides}) or per tier name (the {@code tier} key, null without tiers). Each tier's
 * policy carries its tier's name ({@link RateLimitPolicy#tier()}), so a decision under it can be told apart.
 */
public record ConfiguredPolicy(RateLimitPolicy policy, KeySpec key, MissingKey missingKey,
		Map<String, RateLimitPolicy> overrides, @Nullable KeySpec tier, Map<String, RateLimitPolicy> tiers) {

	public ConfiguredPolicy {
		overrides = Map.copyOf(overrides);
		tiers = named(tiers);
	}

	/** The tiers' policies, each naming its tier (the configured names only, so meters tagged by it stay bounded). */
	private static Map<String, RateLimitPolicy> named(Map<String, RateLimitPolicy> tiers) {
		Map<String, RateLimitPolicy> named = new HashMap<>();
		tiers.forEach((name, policy) -> named.put(name,
				name.equals(policy.tier()) ? policy : policy.toBuilder().tier(name).build()));
		return Map.copyOf(named);
	}

	/** A policy without overrides or tiers. */
	public static ConfiguredPolicy of(RateLimitPolicy policy, KeySpec key, MissingKey missingKey) {
		return new ConfiguredPolicy(policy, key, missingKey, Map.of(), null, Map.of());
	}

	public String name() {
		return this.policy.name();
	}

	/**
	 * What this policy's overrides are looked up by: the value when the key's {@link KeySpec#source()} is the
	 * policy's own, else the whole identity, so an override never applies to a value of another source.
	 */
	public String overrideKey(String source, String value, String identity) {
		return source.equals(this.key.source()) ? value : identity;
	}

}
