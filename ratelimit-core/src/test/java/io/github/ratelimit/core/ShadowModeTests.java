package io.github.ratelimit.core;

import io.github.ratelimit.testkit.FixedWindows;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shadow mode: a policy checked and counted as usual that never denies, whose quota is taken apart from the request's
 * other policies (a shadow denial never stops them taking theirs, and their denial gives back what the shadow policy
 * took), on every backend, blocking and non-blocking.
 */
class ShadowModeTests {

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit, boolean shadow) {
		return RateLimitPolicy.builder(name)
			.algorithm(algorithm)
			.limit(limit)
			.window(Duration.ofHours(1))
			.shadow(shadow)
			.build();
	}

	private static RateLimitDecision check(RateLimiter limiter, boolean async, RateLimitRequest request) {
		return async ? limiter.checkAsync(request).block() : limiter.check(request);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aShadowPolicyAloneCountsAndNeverDenies(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		for (boolean async : new boolean[] { false, true }) {
			RateLimitPolicy shadow = policy("alone-" + async, Algorithm.SLIDING_WINDOW_LOG, 2, true);
			List<Boolean> wouldAllow = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				RateLimitDecision decision = check(fixture.limiter, async, RateLimitRequest.of(shadow, "client"));
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.decisions()).isEmpty();
				assertThat(decision.retryAfter()).isZero();
				assertThat(decision.shadowDecisions()).hasSize(1);
				wouldAllow.add(decision.shadowDecisions().get(0).allowed());
				assertThat(DefaultRateLimitObservationConvention.outcome(decision))
					.isEqualTo((i < 2) ? DefaultRateLimitObservationConvention.ALLOWED
							: DefaultRateLimitObservationConvention.SHADOW_DENIED);
				assertThat(DefaultRateLimitObservationConvention.outcome(decision.shadowDecisions().get(0)))
					.isEqualTo((i < 2) ? DefaultRateLimitObservationConvention.ALLOWED
							: DefaultRateLimitObservationConvention.SHADOW_DENIED);
			}
			assertThat(wouldAllow).as("async=%s", async).containsExactly(true, true, false, false);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aShadowDenialNeverStopsTheOtherPoliciesTakingTheirQuota(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		// the fixed window's five requests must fall in one hour
		FixedWindows.awayFromWindowEnd(Duration.ofHours(1), Duration.ofSeconds(10));
		for (Algorithm algorithm : Algorithm.values()) {
			for (boolean async : new boolean[] { false, true }) {
				RateLimitPolicy enforced = policy("on-" + algorithm.code() + async, algorithm, 10, false);
				RateLimitPolicy shadow = policy("new-" + algorithm.code() + async, algorithm, 2, true);
				List<Long> remaining = new ArrayList<>();
				List<Permit> permits = new ArrayList<>();
				for (int i = 0; i < 5; i++) {
					RateLimitDecision decision = check(fixture.limiter, async, RateLimitRequest.builder()
						.add(shadow, "client")
						.add(enforced, "client")
						.build());
					assertThat(decision.allowed()).as("%s async=%s #%d", algorithm.id(), async, i).isTrue();
					assertThat(decision.decisions()).extracting((d) -> d.policy().name())
						.containsExactly(enforced.name());
					assertThat(decision.shadowDecisions().get(0).allowed()).isEqualTo(i < 2);
					remaining.add(decision.decisions().get(0).remaining());
					permits.add(decision.permit());
				}
				assertThat(remaining).as("%s async=%s", algorithm.id(), async).containsExactly(9L, 8L, 7L, 6L, 5L);
				if (algorithm.holdsPermits()) {
					// the first two requests hold a permit of each policy, the others one of the enforced policy only
					permits.forEach(Permit::release);
					RateLimitRequest probe = RateLimitRequest.builder().add(shadow, "client", 1)
						.add(enforced, "client", 1)
						.build();
					List<PolicyDecision> state = fixture.backend.inspect(probe);
					assertThat(state.get(0).remaining()).as("shadow permits given back").isEqualTo(2);
					assertThat(state.get(1).remaining()).as("enforced permits given back").isEqualTo(10);
				}
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void whatAShadowPolicyTookIsGivenBackWhenTheOthersDeny(Backends kind) throws InterruptedException {
		Backends.Fixture fixture = kind.fresh();
		for (boolean async : new boolean[] { false, true }) {
			// sliding window logs: a fixed window's boundary (each whole hour) between the requests would refill it
			RateLimitPolicy enforced = policy("strict-" + async, Algorithm.SLIDING_WINDOW_LOG, 2, false);
			RateLimitPolicy shadow = policy("loose-" + async, Algorithm.SLIDING_WINDOW_LOG, 10, true);
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				RateLimitDecision decision = check(fixture.limiter, async,
						RateLimitRequest.builder().add(enforced, "client").add(shadow, "client").build());
				allowed.add(decision.allowed());
				assertThat(decision.shadowDecisions().get(0).allowed()).isTrue();
				if (!decision.allowed()) {
					assertThat(decision.permit().holdsAny()).isFalse();
					assertThat(decision.deciding()).get().extracting((d) -> d.policy().name()).isEqualTo(enforced.name());
				}
			}
			assertThat(allowed).containsExactly(true, true, false, false, false);
			// the give-backs of the three denied requests are sent without waiting for them: read until they landed
			LongSupplier shadowRemaining = () -> fixture.backend
				.inspect(RateLimitRequest.builder().add(shadow, "client", 1).build())
				.get(0)
				.remaining();
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (shadowRemaining.getAsLong() != 8 && System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			assertThat(shadowRemaining.getAsLong()).as("only the two admitted requests count, async=%s", async)
				.isEqualTo(8);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aReversalGivesBackWhatBothPartsTook(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		RateLimitPolicy enforced = policy("filter", Algorithm.SLIDING_WINDOW_COUNTER, 5, false);
		RateLimitPolicy shadow = policy("trial", Algorithm.SLIDING_WINDOW_COUNTER, 5, true);
		RateLimitRequest request = RateLimitRequest.builder().add(enforced, "client").add(shadow, "client").build();
		RateLimitDecision decision = fixture.limiter.check(request);
		assertThat(decision.reversed().decisions().get(0).remaining()).isEqualTo(5);
		assertThat(decision.reversed().shadowDecisions().get(0).remaining()).isEqualTo(5);
		decision.reversal().release();
		List<PolicyDecision> state = fixture.backend.inspect(RateLimitRequest.builder().add(enforced, "client", 1)
			.add(shadow, "client", 1)
			.build());
		assertThat(state).extracting(PolicyDecision::remaining).containsExactly(5L, 5L);
	}

}
