package io.github.ratelimit.spring;

import java.util.Map;

import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy as configured: the engine policy, its key, what happens without one, and the policies replacing it for
 * specific keys (overrides) or tiers.
 *
 * @param policy the base policy
 * @param key how the identity is resolved
 * @param missingKey what happens when the key cannot be resolved
 * @param overrides policies replacing the base for specific identities (e.g. one enterprise customer's API key)
 * @param tier how the tier of a request is resolved (from the principal or the server, never from a value the
 * client sets), or null without tiers
 * @param tiers policies replacing the base per tier name
 */
public record ConfiguredPolicy(RateLimitPolicy policy, KeySpec key, MissingKey missingKey,
		Map<String, RateLimitPolicy> overrides, @Nullable KeySpec tier, Map<String, RateLimitPolicy> tiers) {

	public ConfiguredPolicy {
		overrides = Map.copyOf(overrides);
		tiers = Map.copyOf(tiers);
	}

	/**
	 * A policy without overrides or tiers.
	 * @param missingKey the behaviour without a key
	 * @return the configured policy
	 */
	public static ConfiguredPolicy of(RateLimitPolicy policy, KeySpec key, MissingKey missingKey) {
		return new ConfiguredPolicy(policy, key, missingKey, Map.of(), null, Map.of());
	}

	public String name() {
		return this.policy.name();
	}

	/**
	 * What this policy's overrides are looked up by: the value when its key is the policy's own, else the whole
	 * identity, so an override never applies to a value of another source (a gateway route, an annotation's key).
	 * @param source the source of the key that resolved the value ({@link KeySpec#source()})
	 * @param identity the identity counted for it ({@link KeySpec#identity(String)})
	 * @return the value or the identity
	 */
	public String overrideKey(String source, String value, String identity) {
		return source.equals(this.key.source()) ? value : identity;
	}

}
