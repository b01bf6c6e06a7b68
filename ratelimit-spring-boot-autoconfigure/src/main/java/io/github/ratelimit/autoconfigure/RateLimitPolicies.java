package io.github.ratelimit.autoconfigure;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;

/**
 * The policies of the application, by name, validated from {@code ratelimit.policies}. Every invalid value fails
 * with a message that names its property, e.g. {@code ratelimit.policies.api.limit}.
 */
public final class RateLimitPolicies {

	private final Map<String, ConfiguredPolicy> policies;

	public RateLimitPolicies(Collection<ConfiguredPolicy> policies) {
		Map<String, ConfiguredPolicy> byName = new LinkedHashMap<>();
		policies.forEach((policy) -> byName.put(policy.name(), policy));
		this.policies = Map.copyOf(byName);
	}

	/**
	 * Validates the configured policies.
	 * @param properties the properties
	 * @param keyResolverBeans finds {@link KeyResolver} beans named as {@code @name} in keys
	 * @return the policies
	 * @throws IllegalArgumentException naming the property at fault
	 */
	public static RateLimitPolicies from(RateLimitProperties properties, Function<String, KeyResolver> keyResolverBeans) {
		Map<String, ConfiguredPolicy> policies = new LinkedHashMap<>();
		properties.getPolicies()
			.forEach((name, source) -> policies.put(name,
					configure(name, source, properties.getFailureMode(), keyResolverBeans)));
		return new RateLimitPolicies(policies.values());
	}

	private static ConfiguredPolicy configure(String name, RateLimitProperties.Policy source,
			FailureMode defaultFailureMode, Function<String, KeyResolver> beans) {
		String property = "ratelimit.policies." + name;
		RateLimitPolicy base = policy(property, () -> {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name)
				.limit(source.getLimit())
				.cost(source.getCost())
				.failureMode((source.getFailureMode() != null) ? source.getFailureMode() : defaultFailureMode);
			if (source.getAlgorithm() != null) {
				try {
					builder.algorithm(Algorithm.fromId(source.getAlgorithm()));
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidPolicyException(name, "algorithm",
							Objects.requireNonNullElse(ex.getMessage(), "is unknown"));
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
		});
		KeySpec key = keySpec(property + ".key", source.getKey(), beans);
		Map<String, RateLimitPolicy> overrides = new LinkedHashMap<>();
		source.getOverrides()
			.forEach((identity, limits) -> overrides.put(identity,
					withLimits(property + ".overrides[" + identity + "]", base, limits)));
		RateLimitProperties.Tiers tiers = source.getTiers();
		KeySpec tierKey = null;
		Map<String, RateLimitPolicy> tierLimits = new LinkedHashMap<>();
		if (tiers.getKey() != null) {
			if (tiers.getKey().trim().regionMatches(true, 0, "header:", 0, 7)) {
				throw new IllegalArgumentException("Invalid property '" + property + ".tiers.key': a tier must come "
						+ "from the principal or the server (a SpEL expression over #principal, or @<KeyResolver "
						+ "bean>), not from a header the client can set");
			}
			tierKey = keySpec(property + ".tiers.key", tiers.getKey(), beans);
		}
		else if (!tiers.getLimits().isEmpty()) {
			throw new IllegalArgumentException(
					"Invalid property '" + property + ".tiers.key': required when tiers.limits are configured");
		}
		tiers.getLimits()
			.forEach((tier, limits) -> tierLimits.put(tier,
					withLimits(property + ".tiers.limits." + tier, base, limits)));
		return new ConfiguredPolicy(base, key, source.getMissingKey(), overrides, tierKey, tierLimits);
	}

	private static RateLimitPolicy withLimits(String property, RateLimitPolicy base, RateLimitProperties.Limits limits) {
		return policy(property, () -> {
			RateLimitPolicy.Builder builder = base.toBuilder();
			if (limits.getLimit() != null) {
				builder.limit(limits.getLimit());
				if (limits.getBurst() == null && base.algorithm().supportsBurst() && base.burst() == base.limit()) {
					builder.burst(limits.getLimit());
				}
			}
			if (limits.getWindow() != null) {
				builder.window(limits.getWindow());
			}
			if (limits.getBurst() != null) {
				builder.burst(limits.getBurst());
			}
			if (limits.getMinInterval() != null) {
				builder.minInterval(limits.getMinInterval());
			}
			return builder.build();
		});
	}

	private static RateLimitPolicy policy(String property, Supplier<RateLimitPolicy> builder) {
		try {
			return builder.get();
		}
		catch (InvalidPolicyException ex) {
			throw new IllegalArgumentException(
					"Invalid property '" + property + "." + ex.field() + "': " + ex.getMessage(), ex);
		}
	}

	private static KeySpec keySpec(String property, String spec, Function<String, KeyResolver> beans) {
		try {
			return KeySpec.parse(spec, beans);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Invalid property '" + property + "': " + ex.getMessage(), ex);
		}
	}

	/**
	 * The engine policy of that name.
	 * @param name the policy name
	 * @return the policy
	 * @throws IllegalArgumentException naming the known policies when there is none of that name
	 */
	public RateLimitPolicy get(String name) {
		return configured(name).policy();
	}

	/**
	 * The configured policy of that name (key, overrides, tiers).
	 * @param name the policy name
	 * @return the configured policy
	 * @throws IllegalArgumentException naming the known policies when there is none of that name
	 */
	public ConfiguredPolicy configured(String name) {
		ConfiguredPolicy policy = this.policies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException(
					"Unknown rate-limit policy '" + name + "'; configured policies: " + this.policies.keySet());
		}
		return policy;
	}

	/**
	 * All configured policies.
	 * @return the policies
	 */
	public Collection<ConfiguredPolicy> all() {
		return this.policies.values();
	}

}
