package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The names the properties have, by their types: what the check accepts in a list that another source replaced.
 */
class KnownPropertyNamesTests {

	@Test
	void namesAlongTheTypesAreKnown() {
		assertThat(known("ratelimit.filter.rules[2].paths[0]")).isTrue();
		assertThat(known("ratelimit.filter.rules[2].methods[1]")).isTrue();
		assertThat(known("ratelimit.filter.rules[0].policies")).isTrue();
		assertThat(known("ratelimit.policies.any-name.overrides[Key.1].limit")).isTrue();
		assertThat(known("ratelimit.policies.any-name.tiers.limits.pro.burst")).isTrue();
		assertThat(known("ratelimit.gateway.default-policies[3]")).isTrue();
		assertThat(known("ratelimit.redis.circuit-breaker.enabled")).isTrue();
	}

	@Test
	void aMisspeltElementAnIndexWithoutAListOrAListWithoutAnIndexIsNot() {
		assertThat(known("ratelimit.filter.rules[2].pahts[0]")).isFalse();
		assertThat(known("ratelimit.filter.rules[2].paths.x")).isFalse();
		assertThat(known("ratelimit.filter.rules.paths")).isFalse();
		assertThat(known("ratelimit.enabled[0]")).isFalse();
		assertThat(known("ratelimit.policies.any-name.limmit")).isFalse();
	}

	@Test
	void theFirstUnknownElementComesWithTheTypeAboveIt() {
		RateLimitConfigurationFailureAnalyzer.Unknown unknown = RateLimitConfigurationFailureAnalyzer
			.firstUnknown(ConfigurationPropertyName.of("ratelimit.filter.rules[1].pahts[0]"));
		assertThat(unknown).isEqualTo(new RateLimitConfigurationFailureAnalyzer.Unknown(4, RateLimitProperties.Rule.class));
		assertThat(RateLimitConfigurationFailureAnalyzer.firstUnknown(ConfigurationPropertyName.of("ratelimit.filter.rules.paths")))
			.isEqualTo(new RateLimitConfigurationFailureAnalyzer.Unknown(3, List.class));
	}

	private static boolean known(String name) {
		return RateLimitConfigurationFailureAnalyzer.isKnown(ConfigurationPropertyName.of(name));
	}

}
