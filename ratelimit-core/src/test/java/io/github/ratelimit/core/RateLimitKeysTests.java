package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which keys {@link RateLimitKeys#matches} and {@link RateLimitKeys#pattern} select for a reset: exactly the state
 * keys of the policy and identity asked for, whatever characters the names hold.
 */
class RateLimitKeysTests {

	private final RateLimitKeys keys = new RateLimitKeys("app:rl:");

	@Test
	void aKeyMatchesItsPolicyAndIdentityAndNothingElse() {
		String key = this.keys.key(policy("per-client"), "10.0.0.1");
		assertThat(this.keys.matches(key, null, null)).isTrue();
		assertThat(this.keys.matches(key, "per-client", null)).isTrue();
		assertThat(this.keys.matches(key, null, "10.0.0.1")).isTrue();
		assertThat(this.keys.matches(key, "per-client", "10.0.0.1")).isTrue();
		assertThat(this.keys.matches(key, "per-clien", null)).isFalse();
		assertThat(this.keys.matches(key, "client", null)).isFalse();
		assertThat(this.keys.matches(key, null, "10.0.0.12")).isFalse();
	}

	@Test
	void policyNamesThatLookLikePartsOfAKeyAreComparedWhole() {
		String dotted = this.keys.key(policy("a.b"), "x:y");
		assertThat(this.keys.matches(dotted, "a.b", "x:y")).isTrue();
		assertThat(this.keys.matches(dotted, "a", null)).isFalse();
		assertThat(this.keys.matches(dotted, null, "x")).isFalse();
	}

	@Test
	void digestedIdentitiesMatchByTheirRawValue() {
		String hostile = "{evil}\n" + "x".repeat(100);
		String key = this.keys.key(policy("p"), hostile);
		assertThat(key).doesNotContain("evil");
		assertThat(this.keys.matches(key, "p", hostile)).isTrue();
		assertThat(this.keys.matches(key, "p", "{evil}")).isFalse();
	}

	@Test
	void keysOfAnotherPrefixOrShapeAreNeverMatched() {
		assertThat(this.keys.matches("other:{10.0.0.1}:p:gcra", null, null)).isFalse();
		assertThat(this.keys.matches("app:rl:overrides", null, null)).isFalse();
		assertThat(this.keys.matches("app:rl:overrides:changed", null, null)).isFalse();
		assertThat(this.keys.matches("app:rl:{10.0.0.1}", null, null)).isFalse();
		assertThat(this.keys.matches("app:rl:{10.0.0.1}:gcra", null, null)).isFalse();
	}

	@Test
	void thePatternEscapesGlobCharacters() {
		RateLimitKeys starred = new RateLimitKeys("a*[b]?:");
		assertThat(starred.pattern("p", null)).isEqualTo("a\\*\\[b\\]\\?:{*}:p:*");
		assertThat(starred.pattern(null, "10.0.0.1")).isEqualTo("a\\*\\[b\\]\\?:{10.0.0.1}:*");
		assertThat(starred.pattern(null, null)).isEqualTo("a\\*\\[b\\]\\?:{*}:*");
	}

	private static RateLimitPolicy policy(String name) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.GCRA).limit(5).window(Duration.ofMinutes(1)).build();
	}

}
