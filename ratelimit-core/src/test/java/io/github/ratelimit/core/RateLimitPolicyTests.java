package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Invalid policy values are rejected with a message naming the policy and the field.
 */
class RateLimitPolicyTests {

	private static RateLimitPolicy.Builder valid() {
		return RateLimitPolicy.builder("api").algorithm(Algorithm.TOKEN_BUCKET).limit(10).window(Duration.ofSeconds(1));
	}

	private static void rejects(RateLimitPolicy.Builder builder, String field, String text) {
		assertThatExceptionOfType(InvalidPolicyException.class).isThrownBy(builder::build)
			.satisfies((ex) -> assertThat(ex.field()).isEqualTo(field))
			.withMessageContaining("'" + "api" + "'")
			.withMessageContaining(field)
			.withMessageContaining(text);
	}

	@Test
	void validPolicyKeepsItsValuesAndDefaults() {
		RateLimitPolicy policy = valid().build();
		assertThat(policy.burst()).isEqualTo(10);
		assertThat(policy.cost()).isEqualTo(1);
		assertThat(policy.minInterval()).isZero();
		assertThat(policy.windowMicros()).isEqualTo(1_000_000L);
		assertThat(policy.toBuilder().build()).isEqualTo(policy);
	}

	@Test
	void aTierNameTravelsWithNewLimitsAndTellsPoliciesApart() {
		RateLimitPolicy plain = valid().build();
		RateLimitPolicy gold = valid().tier("gold").build();
		assertThat(plain.tier()).isNull();
		assertThat(gold).isNotEqualTo(plain).hasToString("RateLimitPolicy[api: token-bucket 10/PT1S burst 10 tier gold]");
		RateLimitPolicy overridden = gold.with(new RateLimitPolicy.Limits(20L, null, null, null));
		assertThat(overridden.limit()).isEqualTo(20);
		assertThat(overridden.tier()).as("new limits keep the tier's name").isEqualTo("gold");
	}

	@Test
	void rejectsEachInvalidField() {
		rejects(valid().limit(0), "limit", "between 1 and");
		rejects(valid().limit(-5), "limit", "but was -5");
		rejects(valid().window(Duration.ZERO), "window", "between");
		rejects(valid().window(Duration.ofDays(400)), "window", "between");
		rejects(RateLimitPolicy.builder("api").algorithm(Algorithm.GCRA).limit(1), "window", "required");
		rejects(RateLimitPolicy.builder("api").limit(1).window(Duration.ofSeconds(1)), "algorithm", "required");
		rejects(valid().burst(0), "burst", "between 1 and");
		rejects(valid().algorithm(Algorithm.FIXED_WINDOW).burst(5), "burst", "token-bucket and gcra only");
		rejects(valid().minInterval(Duration.ofMillis(5)), "min-interval", "sliding-window-log only");
		rejects(valid().algorithm(Algorithm.SLIDING_WINDOW_LOG).minInterval(Duration.ofSeconds(2)), "min-interval",
				"between 0 and the window");
		rejects(valid().cost(0), "cost", "between 1 and");
		rejects(valid().cost(11), "cost", "must not exceed the capacity 10");
	}

	@Test
	void rejectsNamesThatCouldNotBePartOfAKey() {
		for (String name : new String[] { "", "with space", "brace{", "-leading", "x".repeat(65) }) {
			assertThatExceptionOfType(InvalidPolicyException.class)
				.isThrownBy(() -> RateLimitPolicy.builder(name).algorithm(Algorithm.GCRA).limit(1)
					.window(Duration.ofSeconds(1)).build())
				.satisfies((ex) -> assertThat(ex.field()).isEqualTo("name"));
		}
	}

	@Test
	void algorithmsParseFromConfigurationNames() {
		assertThat(Algorithm.fromId("token-bucket")).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(Algorithm.fromId("SLIDING_WINDOW_LOG")).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
		assertThat(Algorithm.fromId(" Fixed-Window ")).isEqualTo(Algorithm.FIXED_WINDOW);
		assertThatIllegalArgumentException().isThrownBy(() -> Algorithm.fromId("leaky"))
			.withMessageContaining("leaky")
			.withMessageContaining("token-bucket, gcra, sliding-window-log");
	}

	@Test
	void validationFollowsTheAlgorithmTraits() {
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy.Builder builder = valid().algorithm(algorithm);
			assertThat(accepts(builder.burst(5))).as("burst for %s", algorithm).isEqualTo(algorithm.supportsBurst());
			builder = valid().algorithm(algorithm);
			assertThat(accepts(builder.minInterval(Duration.ofMillis(5)))).as("min-interval for %s", algorithm)
				.isEqualTo(algorithm.supportsMinInterval());
			builder = valid().algorithm(algorithm);
			assertThat(accepts(builder.limit(RateLimitPolicy.MAX_ENTRY_LIMIT + 1))).as("large limit for %s", algorithm)
				.isNotEqualTo(algorithm.keepsEntries());
		}
		assertThat(Algorithm.values()).filteredOn(Algorithm::holdsPermits).containsExactly(Algorithm.CONCURRENCY);
	}

	private static boolean accepts(RateLimitPolicy.Builder builder) {
		try {
			builder.build();
			return true;
		}
		catch (InvalidPolicyException ex) {
			return false;
		}
	}

	@Test
	void requestEntriesRejectCostsBeyondTheCapacity() {
		RateLimitPolicy policy = valid().build();
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitRequest.builder().add(policy, "a", 11))
			.withMessageContaining("'api'")
			.withMessageContaining("between 1 and 10");
	}

}
