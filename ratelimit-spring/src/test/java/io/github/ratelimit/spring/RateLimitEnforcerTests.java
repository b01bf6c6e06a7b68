package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The check: keys, missing keys, overrides and tiers (which policies apply: {@link FilterRulesTests},
 * {@link AnnotationPoliciesTests}).
 */
class RateLimitEnforcerTests {

	static final KeySpec IP = KeySpec.parse("ip", RateLimitEnforcerTests::noBeans);

	private static final KeySpec API_KEY = KeySpec.parse("header:X-Api-Key", RateLimitEnforcerTests::noBeans);

	static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	/** A sliding window log: a fixed window's boundary (each whole minute) between two checks would refill it. */
	static RateLimitPolicy policy(String name, long limit) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(limit)
			.window(Duration.ofMinutes(1)).build();
	}

	static RateLimitEnforcer enforcer(List<ConfiguredPolicy> policies, List<RateLimitRule> rules) {
		return new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				new RateLimitPolicyRegistry(policies), rules, RateLimitEnforcerTests::noBeans, FailureMode.OPEN);
	}

	@Test
	void missingKeysAreSharedSkippedOrDeniedAsConfigured() {
		ConfiguredPolicy shared = ConfiguredPolicy.of(policy("shared", 2), API_KEY, MissingKey.SHARED);
		ConfiguredPolicy skip = ConfiguredPolicy.of(policy("skip", 2), API_KEY, MissingKey.SKIP);
		ConfiguredPolicy deny = ConfiguredPolicy.of(policy("deny", 2), API_KEY, MissingKey.DENY);
		RateLimitEnforcer enforcer = enforcer(List.of(shared, skip, deny), List.of());
		TestRequest anonymous = TestRequest.get("/");
		RateLimitDecision sharedDecision = check(enforcer, anonymous, shared);
		assertThat(sharedDecision.decisions().get(0).identity()).isEqualTo(MissingKey.ANONYMOUS);
		check(enforcer, anonymous.withHeader("Ignored", "x"), shared);
		assertThat(check(enforcer, anonymous, shared).allowed()).as("all keyless requests share one quota").isFalse();
		assertThat(check(enforcer, anonymous.withHeader("X-Api-Key", "k"), shared).allowed()).isTrue();

		RateLimitDecision skipped = check(enforcer, anonymous, skip);
		assertThat(skipped.allowed()).isTrue();
		assertThat(skipped.decisions()).isEmpty();

		RateLimitDecision denied = check(enforcer, anonymous, deny);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.decisions()).singleElement().satisfies((decision) -> {
			assertThat(MissingKey.isDenial(decision)).isTrue();
			assertThat(MissingKey.source(decision)).isEqualTo("header.x-api-key");
		});
		assertThat(RateLimitHeaders.ALL.of(denied, 0).isEmpty()).as("a missing key is no quota to wait for").isTrue();
		assertThat(check(enforcer, anonymous.withHeader("X-Api-Key", "k"), deny).allowed()).isTrue();
	}

	@Test
	void overridesAndTiersReplaceTheLimitsOfSpecificKeys() {
		RateLimitPolicy base = policy("api", 1);
		ConfiguredPolicy api = new ConfiguredPolicy(base, API_KEY, MissingKey.SHARED,
				Map.of("enterprise-key", base.toBuilder().limit(5).build()),
				KeySpec.parse("#principal?.name == 'gold-user' ? 'gold' : null", RateLimitEnforcerTests::noBeans),
				Map.of("gold", base.toBuilder().limit(3).build()));
		RateLimitEnforcer enforcer = enforcer(List.of(api), List.of());
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "enterprise-key"), api)
			.decisions().get(0).limit()).isEqualTo(5);
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "k2").withPrincipal("gold-user"), api)
			.decisions().get(0).limit()).isEqualTo(3);
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "k3").withPrincipal("someone"), api)
			.decisions().get(0).limit()).isEqualTo(1);
	}

	@Test
	void aFailingListenerOfDecisionsNeverFailsTheCheck() {
		ConfiguredPolicy api = ConfiguredPolicy.of(policy("api", 1), API_KEY, MissingKey.SHARED);
		AtomicInteger heard = new AtomicInteger();
		RateLimitEnforcer enforcer = new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				new RateLimitPolicyRegistry(List.of(api)), List.of(), RateLimitEnforcerTests::noBeans, FailureMode.OPEN,
				(decision) -> {
					heard.incrementAndGet();
					throw new IllegalStateException("recording failed");
				});
		TestRequest request = TestRequest.get("/").withHeader("X-Api-Key", "k");
		assertThat(check(enforcer, request, api).allowed()).isTrue();
		assertThat(check(enforcer, request, api).allowed()).isFalse();
		assertThat(heard).hasValue(2);
	}

	private static RateLimitDecision check(RateLimitEnforcer enforcer, RequestContext request,
			ConfiguredPolicy policy) {
		return enforcer.checkAsync(request, List.of(new RateLimitEnforcer.Target(policy, null, 0)), null, null).block();
	}

}
