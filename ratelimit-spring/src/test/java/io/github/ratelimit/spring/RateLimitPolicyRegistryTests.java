package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateLimitPolicyRegistryTests {

	private static ConfiguredPolicy policy(String name, long limit) {
		RateLimitPolicy policy = RateLimitPolicy.builder(name)
			.algorithm(Algorithm.GCRA)
			.limit(limit)
			.window(Duration.ofMinutes(1))
			.build();
		return ConfiguredPolicy.of(policy, KeySpec.parse("ip", RateLimitPolicyRegistryTests::noBeans),
				MissingKey.SHARED);
	}

	/** Policy api, limit 10, with an override of 50 for identity vip and a tier global (every request's) of 20. */
	private static ConfiguredPolicy tiered() {
		RateLimitPolicy base = policy("api", 10).policy();
		return new ConfiguredPolicy(base, KeySpec.parse("ip", RateLimitPolicyRegistryTests::noBeans),
				MissingKey.SHARED, Map.of("vip", base.with(new Limits(50L, null, null, null))),
				KeySpec.parseTier("global", RateLimitPolicyRegistryTests::noBeans),
				Map.of("global", base.with(new Limits(20L, null, null, null))));
	}

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	@Test
	void looksPoliciesUpByNameInConfigurationOrder() {
		ConfiguredPolicy zeta = policy("zeta", 1);
		ConfiguredPolicy alpha = policy("alpha", 2);
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(zeta, alpha));
		assertThat(registry.configured("alpha")).isSameAs(alpha);
		assertThat(registry.get("zeta")).isSameAs(zeta.policy());
		assertThat(registry.find("alpha")).isSameAs(alpha);
		assertThat(registry.find("nope")).isNull();
		assertThat(registry.contains("zeta")).isTrue();
		assertThat(registry.contains("nope")).isFalse();
		assertThat(registry.names()).containsExactly("zeta", "alpha");
		assertThat(registry.all()).containsExactly(zeta, alpha);
	}

	@Test
	void unknownNamesAreReportedWithTheConfiguredOnes() {
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(policy("zeta", 1), policy("alpha", 2)));
		assertThatIllegalArgumentException().isThrownBy(() -> registry.configured("nope"))
			.withMessage("Unknown rate-limit policy 'nope'; configured policies: [zeta, alpha]");
		assertThatIllegalArgumentException().isThrownBy(() -> registry.get("nope"))
			.withMessage("Unknown rate-limit policy 'nope'; configured policies: [zeta, alpha]");
	}

	@Test
	void aLaterPolicyReplacesAnEarlierOneOfTheSameName() {
		ConfiguredPolicy later = policy("api", 2);
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(policy("api", 1), later));
		assertThat(registry.configured("api")).isSameAs(later);
		assertThat(registry.names()).containsExactly("api");
	}

	@Test
	void oneResolutionOrderConfiguredOverrideOrTierThenRuntimeOverridesOfThePolicyAndTheIdentity() {
		ConfiguredPolicy api = tiered();
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(api));
		TestRequest request = TestRequest.get("/");
		assertThat(registry.effective(api, "vip", request).limit()).as("the override wins over the tier").isEqualTo(50);
		assertThat(registry.effective(api, "other", request).limit()).as("the tier").isEqualTo(20);
		assertThat(registry.effective(api, "other", null).limit()).as("no request, no tier").isEqualTo(10);
		registry.overrides().set("api", null, new RuntimeOverride(null, Duration.ofMinutes(2), null, null));
		registry.overrides().set("api", "vip", new RuntimeOverride(60L, null, null, null));
		RateLimitPolicy vip = registry.effective(api, "vip", request);
		assertThat(vip.limit()).isEqualTo(60);
		assertThat(vip.window()).as("the policy's runtime override under the identity's").isEqualTo(Duration.ofMinutes(2));
		assertThat(registry.effective(api, "other", request).window()).isEqualTo(Duration.ofMinutes(2));
		assertThat(registry.effective(api, "other", request).limit()).isEqualTo(20);
	}

	@Test
	void theEffectivePolicyNamesTheTierThatSetItsLimitsAlsoUnderARuntimeOverride() {
		ConfiguredPolicy api = tiered();
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(api));
		TestRequest request = TestRequest.get("/");
		assertThat(registry.effective(api, "other", request).tier()).isEqualTo("global");
		assertThat(registry.effective(api, "vip", request).tier()).as("a configured override is no tier").isNull();
		assertThat(registry.effective(api, "other", null).tier()).as("no request, no tier").isNull();
		registry.overrides().set("api", null, new RuntimeOverride(30L, null, null, null));
		RateLimitPolicy overridden = registry.effective(api, "other", request);
		assertThat(overridden.limit()).isEqualTo(30);
		assertThat(overridden.tier()).as("a runtime override keeps the tier's name").isEqualTo("global");
		assertThat(registry.effective(api, "vip", request).tier()).isNull();
	}

}
