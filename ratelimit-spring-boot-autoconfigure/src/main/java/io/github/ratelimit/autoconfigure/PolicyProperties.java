package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns {@code ratelimit.policies} into the {@link RateLimitPolicyRegistry}. Every invalid value fails with an
 * {@link InvalidConfigurationPropertyValueException} that names its property, e.g.
 * {@code ratelimit.policies.api.limit}, which Spring Boot's failure analysis reports at startup.
 */
final class PolicyProperties {

	private PolicyProperties() {
	}

	/**
	 * Validates the configured policies.
	 * @param properties the properties
	 * @param keyResolverBeans finds {@link KeyResolver} beans named as {@code @name} in keys
	 * @return the policies
	 * @throws InvalidConfigurationPropertyValueException naming the property at fault
	 */
	static RateLimitPolicyRegistry registry(RateLimitProperties properties,
			Function<String, KeyResolver> keyResolverBeans, RateLimitOverrides overrides) {
		List<ConfiguredPolicy> policies = new ArrayList<>();
		properties.getPolicies()
			.forEach((name, source) -> policies
				.add(configure(name, source, properties.getFailureMode(), keyResolverBeans)));
		return new RateLimitPolicyRegistry(policies, overrides);
	}

	private static ConfiguredPolicy configure(String name, RateLimitProperties.Policy source,
			FailureMode defaultFailureMode, Function<String, KeyResolver> beans) {
		String property = "ratelimit.policies." + name;
		RateLimitPolicy base = policy(property, (field) -> value(field, source), () -> {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name)
				.limit(source.getLimit())
				.cost(source.getCost())
				.failureMode((source.getFailureMode() != null) ? source.getFailureMode() : defaultFailureMode)
				.shadow(source.isShadow());
			if (source.getAlgorithm() != null) {
				builder.algorithm(source.getAlgorithm());
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
		if (source.getMaxWait().isNegative()) {
			throw new InvalidConfigurationPropertyValueException(property + ".max-wait", source.getMaxWait(),
					"must not be negative (0 means never wait)");
		}
		KeySpec key = keySpec(property + ".key", source.getKey(), beans);
		Map<String, RateLimitPolicy> overrides = new LinkedHashMap<>();
		source.getOverrides()
			.forEach((identity, limits) -> overrides.put(identity,
					withLimits(property + ".overrides[" + identity + "]", base, limits, source)));
		RateLimitProperties.Tiers tiers = source.getTiers();
		KeySpec tierKey = null;
		Map<String, RateLimitPolicy> tierLimits = new LinkedHashMap<>();
		if (tiers.getKey() != null) {
			String spec = tiers.getKey();
			try {
				tierKey = KeySpec.parseTier(spec, beans);
			}
			catch (RuntimeException ex) {
				throw new InvalidConfigurationPropertyValueException(property + ".tiers.key", spec, ex.getMessage(),
						ex);
			}
		}
		else if (!tiers.getLimits().isEmpty()) {
			throw new InvalidConfigurationPropertyValueException(property + ".tiers.key", null,
					"required when tiers.limits are configured");
		}
		tiers.getLimits()
			.forEach((tier, limits) -> tierLimits.put(tier,
					withLimits(property + ".tiers.limits." + tier, base, limits, source)));
		return new ConfiguredPolicy(base, key, source.getMissingKey(), overrides, tierKey, tierLimits);
	}

	private static RateLimitPolicy withLimits(String property, RateLimitPolicy base, RateLimitProperties.Limits limits,
			RateLimitProperties.Policy source) {
		return policy(property, (field) -> value(field, limits, source), () -> base.with(new Limits(limits.getLimit(),
				limits.getWindow(), limits.getBurst(), limits.getMinInterval())));
	}

	/**
	 * Builds a policy, reporting an invalid field as its property.
	 * @param property the property holding the policy's fields
	 * @param values the configured value of a field
	 * @param builder builds the policy
	 * @return the policy
	 */
	private static RateLimitPolicy policy(String property, Function<String, @Nullable Object> values,
			Supplier<RateLimitPolicy> builder) {
		try {
			return builder.get();
		}
		catch (InvalidPolicyException ex) {
			if (ex.field().equals("name")) {
				// the name is the key under ratelimit.policies, not a property of its own
				throw new InvalidConfigurationPropertyValueException(property, ex.policy(), ex.getMessage());
			}
			throw new InvalidConfigurationPropertyValueException(property + "." + ex.field(), values.apply(ex.field()),
					ex.getMessage());
		}
	}

	/** The value of a policy's field, as configured. */
	private static @Nullable Object value(String field, RateLimitProperties.Policy source) {
		return switch (field) {
			case "algorithm" -> source.getAlgorithm();
			case "limit" -> source.getLimit();
			case "window" -> source.getWindow();
			case "burst" -> source.getBurst();
			case "min-interval" -> source.getMinInterval();
			case "cost" -> source.getCost();
			default -> null;
		};
	}

	/** The value of an override's or a tier's field: its own, else the policy's that it inherits. */
	private static @Nullable Object value(String field, RateLimitProperties.Limits limits,
			RateLimitProperties.Policy source) {
		Object value = switch (field) {
			case "limit" -> limits.getLimit();
			case "window" -> limits.getWindow();
			case "burst" -> limits.getBurst();
			case "min-interval" -> limits.getMinInterval();
			default -> null;
		};
		return (value != null) ? value : value(field, source);
	}

	private static KeySpec keySpec(String property, String spec, Function<String, KeyResolver> beans) {
		try {
			return KeySpec.parse(spec, beans);
		}
		catch (RuntimeException ex) {
			throw new InvalidConfigurationPropertyValueException(property, spec, ex.getMessage(), ex);
		}
	}

}
