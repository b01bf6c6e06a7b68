package io.github.ratelimit.autoconfigure;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.RateLimitPolicy;

/**
 * The policies of the application, by name, validated from {@code ratelimit.policies}.
 */
public final class RateLimitPolicies {

	private final Map<String, RateLimitPolicy> policies;

	public RateLimitPolicies(Collection<RateLimitPolicy> policies) {
		Map<String, RateLimitPolicy> byName = new LinkedHashMap<>();
		policies.forEach((policy) -> byName.put(policy.name(), policy));
		this.policies = Collections.unmodifiableMap(byName);
	}

	/**
	 * Validates the configured policies.
	 * @param properties the properties
	 * @return the policies
	 * @throws IllegalArgumentException naming the property {@code ratelimit.policies.<name>.<field>} at fault
	 */
	public static RateLimitPolicies from(RateLimitProperties properties) {
		return new RateLimitPolicies(properties.getPolicies().entrySet().stream().map((entry) -> {
			try {
				return toPolicy(entry.getKey(), entry.getValue());
			}
			catch (InvalidPolicyException ex) {
				throw new IllegalArgumentException("Invalid property 'ratelimit.policies." + entry.getKey() + "."
						+ ex.field() + "': " + ex.getMessage(), ex);
			}
		}).toList());
	}

	private static RateLimitPolicy toPolicy(String name, RateLimitProperties.Policy source) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).limit(source.getLimit()).cost(source.getCost());
		if (source.getAlgorithm() != null) {
			try {
				builder.algorithm(Algorithm.fromId(source.getAlgorithm()));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidPolicyException(name, "algorithm", ex.getMessage());
			}
		}
		if (source.getWindow() != null) {
			builder.window(source.getWindow());
		}
		if (source.getBurst() != null) {
			builder.burst(source.getBurst());
		}
		if (source.getMinInterval() != null) {
			builder.minInterval(source.getMinInterval());
		}
		return builder.build();
	}

	/**
	 * The policy of that name.
	 * @param name the policy name
	 * @return the policy
	 * @throws IllegalArgumentException naming the known policies when there is none of that name
	 */
	public RateLimitPolicy get(String name) {
		RateLimitPolicy policy = this.policies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException(
					"Unknown rate-limit policy '" + name + "'; configured policies: " + this.policies.keySet());
		}
		return policy;
	}

	/**
	 * All policies by name, in configuration order.
	 * @return the policies
	 */
	public Map<String, RateLimitPolicy> asMap() {
		return this.policies;
	}

}
