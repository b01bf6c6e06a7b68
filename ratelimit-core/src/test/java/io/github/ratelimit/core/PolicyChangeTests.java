package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.github.ratelimit.core.Requests.admitAll;
import static io.github.ratelimit.core.Requests.at;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy changed under its name (new configuration, a runtime override) while keys hold state written under the
 * old one: no change admits more than a fresh identity under the new policy would, locks an identity out for longer
 * than the new policy can, or gives a retry-after that is early. The rules per algorithm are in
 * {@code docs/architecture.md}.
 */
class PolicyChangeTests {

	private static final long T0 = Backends.Clock.T0;

	private static final long SECOND = 1_000_000L;

	private static final long HOUR = 3_600 * SECOND;

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(window).build();
	}

	/** A denial's retry-after is not early: the same request at that time is admitted. */
	private static void assertRetryIsNotEarly(RateLimiter limiter, long time, RateLimitPolicy policy, String identity,
			String description) {
		RateLimitDecision denied = at(limiter, time, policy, identity, 1);
		assertThat(denied.allowed()).as("%s: denied", description).isFalse();
		long wait = denied.retryAfter().toNanos() / 1_000;
		assertThat(wait).as("%s: a denial has a wait", description).isPositive();
		assertThat(at(limiter, time + wait, policy, identity, 1).allowed())
			.as("%s: admitted once the retry-after has passed (%d us)", description, wait)
			.isTrue();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aLongerWindowAdmitsWhatAFreshIdentityWould(Backends kind) {
		// one request under 100 per second, then 100 per hour with 40 requests an hour for five hours: all 200 pass,
		// as for a fresh identity (the sliding window counter used to admit 99 and give early retry-afters)
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : Algorithm.values()) {
			String name = "grow-" + algorithm.code();
			RateLimitPolicy before = policy(name, algorithm, 100, Duration.ofSeconds(1));
			RateLimitPolicy after = policy(name, algorithm, 100, Duration.ofHours(1));
			assertThat(at(limiter, T0, before, "steady", 1).allowed()).isTrue();
			int admitted = 0;
			for (int i = 1; i <= 200; i++) {
				admitted += at(limiter, T0 + i * 90 * SECOND, after, "steady", 1).allowed() ? 1 : 0;
			}
			assertThat(admitted).as(algorithm.id()).isEqualTo(200);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aShorterWindowCountsTheOldWindowsRequestsOnceThenForgetsThem(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER,
				Algorithm.SLIDING_WINDOW_LOG }) {
			String name = "shrink-" + algorithm.code();
			RateLimitPolicy hourly = policy(name, algorithm, 100, Duration.ofHours(1));
			RateLimitPolicy perSecond = policy(name, algorithm, 100, Duration.ofSeconds(1));
			long start = T0 + 600 * SECOND;
			assertThat(admitAll(limiter, start, hourly, "burst", 100)).isEqualTo(100);
			// the hour's 100 requests may all lie in this second: the new policy admits none more in it
			assertThat(at(limiter, start + 1, perSecond, "burst", 1).allowed()).as(algorithm.id()).isFalse();
			assertRetryIsNotEarly(limiter, start + 2, perSecond, "burst", algorithm.id());
			// and the old hour does not lock the identity out: two seconds on, a full new window
			assertThat(admitAll(limiter, start + 3 * SECOND, perSecond, "burst", 200)).as(algorithm.id())
				.isEqualTo(100);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aSmallerBurstNeverLeavesMoreThanAFullBucket(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy deep = RateLimitPolicy.builder("burst-tb")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(100)
			.window(Duration.ofSeconds(1))
			.burst(100)
			.build();
		RateLimitPolicy shallow = deep.toBuilder().burst(10).build();
		assertThat(at(limiter, T0, deep, "tb", 1).allowed()).isTrue();
		// 99 tokens left, but the new bucket holds 10: as many as a fresh identity gets
		assertThat(admitAll(limiter, T0, shallow, "tb", 200)).isEqualTo(10);
		assertRetryIsNotEarly(limiter, T0, shallow, "tb", "token bucket");
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void gcraKeepsItsBacklogInCellsSoANewRateOrBurstDoesNotLockAnIdentityOut(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy slow = RateLimitPolicy.builder("gcra")
			.algorithm(Algorithm.GCRA)
			.limit(1)
			.window(Duration.ofSeconds(1))
			.burst(10)
			.build();
		assertThat(admitAll(limiter, T0, slow, "cells", 100)).isEqualTo(10);
		// ten cells used: at 100 per second they are 100 ms of backlog, exactly the new tolerance, not 10 s
		RateLimitPolicy fast = slow.toBuilder().limit(100).build();
		RateLimitDecision denied = at(limiter, T0, fast, "cells", 1);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(10));
		assertRetryIsNotEarly(limiter, T0, fast, "cells", "faster rate");
		// a full backlog of 100 cells under a burst of 10: at most a full tolerance, one interval to wait
		RateLimitPolicy wide = slow.toBuilder().limit(100).burst(100).build();
		assertThat(admitAll(limiter, T0 + HOUR, wide, "deep", 200)).isEqualTo(100);
		RateLimitPolicy narrow = wide.toBuilder().burst(10).build();
		RateLimitDecision refused = at(limiter, T0 + HOUR, narrow, "deep", 1);
		assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(10));
		assertThat(refused.decisions().get(0).remaining()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aSmallerLimitReportsNothingRemainingAndAWaitThatIsNotEarly(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : Algorithm.values()) {
			String name = "lower-" + algorithm.code();
			RateLimitPolicy ten = policy(name, algorithm, 10, Duration.ofMinutes(1));
			RateLimitPolicy five = policy(name, algorithm, 5, Duration.ofMinutes(1));
			long start = T0 + 10 * SECOND;
			assertThat(admitAll(limiter, start, ten, "over", 10)).isEqualTo(10);
			RateLimitDecision denied = at(limiter, start + SECOND, five, "over", 1);
			assertThat(denied.allowed()).as(algorithm.id()).isFalse();
			assertThat(denied.decisions().get(0).remaining()).as(algorithm.id()).isZero();
			assertRetryIsNotEarly(limiter, start + SECOND, five, "over", algorithm.id());
		}
	}

}
