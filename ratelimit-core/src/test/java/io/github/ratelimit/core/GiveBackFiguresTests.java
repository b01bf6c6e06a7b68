package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision whose cost is given back reports figures that agree with each other: the remaining quota with the cost
 * back, and for the refilling algorithms the time until full without the cost's refill (a token bucket that had 3
 * tokens back no longer says it is full in the time 5 would take).
 */
class GiveBackFiguresTests {

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aGiveBackReportsTheRemainingAndTheTimeUntilFullOfTheStateItLeaves(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		for (Algorithm algorithm : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.GCRA }) {
			// one unit every 10 s
			RateLimitPolicy policy = RateLimitPolicy.builder("refill-" + algorithm.id())
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofSeconds(100))
				.build();
			PolicyDecision first = fixture.limiter.check(RateLimitRequest.builder().add(policy, "client", 5).build())
				.decisions()
				.get(0);
			RateLimitDecision second = fixture.limiter
				.check(RateLimitRequest.builder().add(policy, "client", 2).build());
			PolicyDecision taken = second.decisions().get(0);
			PolicyDecision givenBack = second.reversed().decisions().get(0);
			assertThat(first.remaining()).isEqualTo(5);
			assertThat(taken.remaining()).isEqualTo(3);
			assertThat(givenBack.remaining()).isEqualTo(5);
			assertThat(givenBack.resetAfter()).as(algorithm.id())
				.isEqualTo(taken.resetAfter().minus(Duration.ofSeconds(20)))
				.isLessThanOrEqualTo(first.resetAfter());
		}
		RateLimitPolicy window = RateLimitPolicy.builder("window").algorithm(Algorithm.FIXED_WINDOW).limit(3)
			.window(Duration.ofHours(1)).build();
		RateLimitDecision whole = fixture.limiter.check(RateLimitRequest.builder().add(window, "client", 3).build());
		assertThat(whole.reversed().decisions().get(0).resetAfter()).as("full again: nothing to wait for")
			.isZero();
	}

}
