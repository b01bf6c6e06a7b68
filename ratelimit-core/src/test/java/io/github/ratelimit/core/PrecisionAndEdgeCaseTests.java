package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import static io.github.ratelimit.core.Requests.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Precision and edge cases found in review: every one runs on the local backend, Redis and Redis Cluster.
 */
class PrecisionAndEdgeCaseTests {

	private static final long T0 = Backends.Clock.T0;

	@ParameterizedTest
	@EnumSource(Backends.class)
	void gcraAndTokenBucketWithBurstOneAdmitOneRequestPerIntervalForEveryLimit(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.GCRA, Algorithm.TOKEN_BUCKET }) {
			for (long limit = 1; limit <= 100; limit++) {
				RateLimitPolicy policy = RateLimitPolicy.builder("one-" + limit)
					.algorithm(algorithm)
					.limit(limit)
					.window(Duration.ofSeconds(1))
					.burst(1)
					.build();
				String who = algorithm.code() + limit;
				assertThat(at(limiter, T0, policy, who, 1).allowed()).as("%s %d/s first", algorithm.id(), limit).isTrue();
				RateLimitDecision second = at(limiter, T0, policy, who, 1);
				assertThat(second.allowed()).isFalse();
				long interval = (long) Math.ceil(1_000_000.0 / limit);
				assertThat(second.retryAfter()).as("%s %d/s", algorithm.id(), limit).isEqualTo(Duration.ofNanos(interval * 1000));
				assertThat(at(limiter, T0 + interval, policy, who, 1).allowed()).as("%s %d/s after one interval",
						algorithm.id(), limit).isTrue();
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void theWholeBurstIsAdmittedAtOneInstantForEveryLimit(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.GCRA, Algorithm.TOKEN_BUCKET }) {
			for (long limit : new long[] { 6, 7, 15, 24, 35, 41, 59, 60, 99 }) {
				RateLimitPolicy policy = RateLimitPolicy.builder("full-" + limit)
					.algorithm(algorithm)
					.limit(limit)
					.window(Duration.ofMinutes(1))
					.build();
				int admitted = 0;
				for (int i = 0; i < limit + 5; i++) {
					admitted += at(limiter, T0 + 17, policy, algorithm.code() + "full" + limit, 1).allowed() ? 1 : 0;
				}
				assertThat(admitted).as("%s %d per minute", algorithm.id(), limit).isEqualTo(limit);
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void veryHighRatesStillLimitTheBurst(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.GCRA, Algorithm.TOKEN_BUCKET }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("fast")
				.algorithm(algorithm)
				.limit(RateLimitPolicy.MAX_LIMIT)
				.window(Duration.ofMillis(1))
				.burst(10)
				.build();
			int admitted = 0;
			for (int i = 0; i < 200; i++) {
				admitted += at(limiter, T0 + 5, policy, "fast-" + algorithm.code(), 1).allowed() ? 1 : 0;
			}
			assertThat(admitted).as(algorithm.id()).isEqualTo(10);
		}
	}

	/**
	 * Random policies and states: whenever a request is denied with a retry-after, the same request is admitted
	 * exactly then, never earlier. Each round uses a fresh identity so probing does not disturb the next.
	 */
	@ParameterizedTest
	@EnumSource(Backends.class)
	void retryAfterIsNeverEarly(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		Random random = new Random(42);
		int denials = 0;
		for (int round = 0; round < 240; round++) {
			Algorithm algorithm = Algorithm.values()[round % Algorithm.values().length];
			long limit = 1 + random.nextInt(40);
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder("r" + round)
				.algorithm(algorithm)
				.limit(limit)
				.window(Duration.ofNanos((1 + random.nextInt(2_000_000)) * 1000L));
			if (algorithm.supportsBurst()) {
				builder.burst(1 + random.nextInt(40));
			}
			RateLimitPolicy policy = builder.build();
			String who = "round-" + round;
			long now = T0 + random.nextInt(5_000_000);
			RateLimitDecision denied = null;
			for (int i = 0; i < 200 && denied == null; i++) {
				now += random.nextInt(20_000);
				long cost = 1 + random.nextInt((int) Math.min(3, policy.capacity()));
				RateLimitDecision decision = at(limiter, now, policy, who, cost);
				if (!decision.allowed()) {
					denied = decision;
					long wait = decision.retryAfter().toNanos() / 1000;
					assertThat(wait).as("round %d %s: a denial has a wait", round, policy).isPositive();
					RateLimitDecision retried = at(limiter, now + wait, policy, who, cost);
					assertThat(retried.allowed()).as("round %d %s at +%d us", round, policy, wait).isTrue();
				}
			}
			denials += (denied != null) ? 1 : 0;
		}
		assertThat(denials).as("the rounds must produce denials to check").isGreaterThan(150);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void largeCostsFitInOneScript(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.SLIDING_WINDOW_LOG, Algorithm.CONCURRENCY }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("big-" + algorithm.code())
				.algorithm(algorithm)
				.limit(RateLimitPolicy.MAX_ENTRY_LIMIT)
				.window(Duration.ofMinutes(1))
				.build();
			RateLimitDecision first = at(limiter, T0, policy, "bulk", 9_000);
			assertThat(first.allowed()).isTrue();
			assertThat(first.decisions().get(0).remaining()).isEqualTo(91_000);
			first.reversal().release();
			assertThat(at(limiter, T0, policy, "bulk", 1).decisions().get(0).remaining())
				.as("all 9,000 entries given back").isEqualTo(99_999);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aRefundGoesBackToTheWindowItWasCountedIn(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("edge-" + algorithm.code())
				.algorithm(algorithm)
				.limit(3)
				.window(Duration.ofSeconds(1))
				.build();
			RateLimitDecision early = at(limiter, T0 + 999_900, policy, "edge", 1);
			assertThat(early.allowed()).isTrue();
			long later = (algorithm == Algorithm.FIXED_WINDOW) ? T0 + 1_000_100 : T0 + 1_999_000;
			int admitted = 0;
			for (int i = 0; i < 5; i++) {
				admitted += at(limiter, later, policy, "edge", 1).allowed() ? 1 : 0;
			}
			early.reversal().release();
			int admittedAfter = 0;
			for (int i = 0; i < 5; i++) {
				admittedAfter += at(limiter, later, policy, "edge", 1).allowed() ? 1 : 0;
			}
			// as if the early request had never been made: the fixed window's next window was never affected; the
			// sliding counter's previous window loses its one request, whose weight had held back one admission
			assertThat(admitted + admittedAfter).as(algorithm.id()).isEqualTo(3);
			assertThat(admittedAfter).as(algorithm.id()).isEqualTo(algorithm == Algorithm.FIXED_WINDOW ? 0 : 1);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aClockThatGoesBackDoesNotOpenAFreshWindow(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("back-" + algorithm.code())
				.algorithm(algorithm)
				.limit(2)
				.window(Duration.ofSeconds(1))
				.build();
			assertThat(at(limiter, T0 + 1_500_000, policy, "skew", 2).allowed()).isTrue();
			assertThat(at(limiter, T0 + 900_000, policy, "skew", 1).allowed()).as(algorithm.id()).isFalse();
		}
	}

	@Test
	void aFailingSlotOnClusterGivesBackWhatTheOtherSlotsTook() {
		Backends.Fixture fixture = Backends.REDIS_CLUSTER.fresh();
		RateLimitPolicy counted = RateLimitPolicy.builder("counted")
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.build();
		RateLimitPolicy broken = RateLimitPolicy.builder("broken")
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.build();
		String good = "203.0.113.7";
		String bad = "key-7";
		assertThat(ClusterSlotHashUtil.calculateSlot("{" + good + "}"))
			.isNotEqualTo(ClusterSlotHashUtil.calculateSlot("{" + bad + "}"));
		// a key of the wrong type makes the second slot's script fail
		fixture.redis().opsForValue().set(new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX).key(broken, bad), "not a set");
		RateLimitRequest request = RateLimitRequest.builder().add(counted, good).add(broken, bad).at(T0).build();
		assertThatThrownBy(() -> fixture.limiter.check(request)).hasStackTraceContaining("WRONGTYPE");
		assertThatThrownBy(() -> fixture.limiter.checkAsync(request).block(Duration.ofSeconds(10)))
			.hasStackTraceContaining("WRONGTYPE");
		assertThat(at(fixture.limiter, T0, counted, good, 1).decisions().get(0).remaining())
			.as("the failed requests took nothing from the healthy slot")
			.isEqualTo(4);
	}

	@Test
	void policiesWhoseNumbersWouldLosePrecisionAreRejected() {
		assertThatExceptionOfType(InvalidPolicyException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("slow")
				.algorithm(Algorithm.TOKEN_BUCKET)
				.limit(1)
				.window(Duration.ofDays(366))
				.burst(1000)
				.build())
			.satisfies((ex) -> assertThat(ex.field()).isEqualTo("burst"))
			.withMessageContaining("142 years");
		assertThatExceptionOfType(InvalidPolicyException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("log")
				.algorithm(Algorithm.SLIDING_WINDOW_LOG)
				.limit(RateLimitPolicy.MAX_ENTRY_LIMIT + 1)
				.window(Duration.ofMinutes(1))
				.build())
			.satisfies((ex) -> assertThat(ex.field()).isEqualTo("limit"));
		RateLimitPolicy longest = RateLimitPolicy.builder("longest")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(1)
			.window(Duration.ofDays(366))
			.burst(100)
			.build();
		assertThat(longest.burst()).isEqualTo(100);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void theLongestAcceptedHorizonReportsExactDurations(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy policy = RateLimitPolicy.builder("longest")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(1)
			.window(Duration.ofDays(366))
			.burst(100)
			.build();
		RateLimitDecision first = at(limiter, T0, policy, "patient", 100);
		assertThat(first.decisions().get(0).resetAfter()).isEqualTo(Duration.ofDays(36_600));
		RateLimitDecision denied = at(limiter, T0, policy, "patient", 1);
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofDays(366));
	}

}
