package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm on every backend, with explicit time: the exact decisions each algorithm must make. The same
 * expectations hold on the local backend, on Redis and on Redis Cluster.
 */
class AlgorithmConformanceTests {

	private static final Duration SECOND = Duration.ofSeconds(1);

	private final Backends.Clock clock = new Backends.Clock();

	private RateLimiter limiter;

	private void on(Backends kind) {
		this.limiter = fixture(kind).limiter;
	}

	/** The backend a test runs on; {@link FunctionsModeConformanceTests} runs them all on Redis functions. */
	Backends.Fixture fixture(Backends kind) {
		return kind.fresh();
	}

	private RateLimitDecision hit(RateLimitPolicy policy) {
		return hit(policy, "client-1", policy.cost());
	}

	private RateLimitDecision hit(RateLimitPolicy policy, String identity, long cost) {
		return this.limiter
			.check(RateLimitRequest.builder().add(policy, identity, cost).at(this.clock.now()).build());
	}

	/** Admits while allowed, up to max, and returns how many were admitted. */
	private int admitAll(RateLimitPolicy policy, int max) {
		int admitted = 0;
		while (admitted < max && hit(policy).allowed()) {
			admitted++;
		}
		return admitted;
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("p-" + algorithm.code()).algorithm(algorithm).limit(limit).window(window).build();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void fixedWindowAdmitsTwiceTheLimitAcrossABoundary(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 10, SECOND);
		this.clock.setMillis(900);
		assertThat(admitAll(policy, 100)).isEqualTo(10);
		RateLimitDecision denied = hit(policy);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(100));
		this.clock.setMillis(1000);
		assertThat(admitAll(policy, 100)).as("a new window starts at the boundary").isEqualTo(10);
		// 20 admitted within 100 ms: twice the limit in one window's length
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void fixedWindowReportsRemainingAndReset(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 3, SECOND);
		this.clock.setMillis(250);
		PolicyDecision first = hit(policy).decisions().get(0);
		assertThat(first.remaining()).isEqualTo(2);
		assertThat(first.limit()).isEqualTo(3);
		assertThat(first.resetAfter()).isEqualTo(Duration.ofMillis(750));
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void slidingWindowLogNeverExceedsTheLimitInAnyWindow(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.SLIDING_WINDOW_LOG, 10, SECOND);
		this.clock.setMillis(900);
		assertThat(admitAll(policy, 100)).isEqualTo(10);
		this.clock.setMillis(1000);
		RateLimitDecision denied = hit(policy);
		assertThat(denied.allowed()).as("no boundary burst").isFalse();
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(900));
		assertThat(denied.decisions().get(0).resetAfter()).isEqualTo(Duration.ofMillis(900));
		this.clock.setMillis(1899);
		assertThat(hit(policy).allowed()).isFalse();
		this.clock.setMillis(1900);
		assertThat(admitAll(policy, 100)).as("all ten leave the window together").isEqualTo(10);

		// a steady stream at three times the limit: no window of one second ever holds more than 10 admissions
		List<Long> admittedAt = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			this.clock.setMillis(5000 + i * 33L);
			if (hit(policy).allowed()) {
				admittedAt.add(this.clock.now());
			}
		}
		assertThat(maxInAnyWindow(admittedAt, 1_000_000L)).isEqualTo(10);
		assertThat(admittedAt.size()).isBetween(95, 105);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void slidingWindowLogEnforcesTheMinimumInterval(Backends kind) {
		on(kind);
		RateLimitPolicy policy = RateLimitPolicy.builder("spaced")
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(10)
			.window(SECOND)
			.minInterval(Duration.ofMillis(100))
			.build();
		this.clock.setMillis(0);
		assertThat(hit(policy).allowed()).isTrue();
		this.clock.setMillis(40);
		RateLimitDecision tooSoon = hit(policy);
		assertThat(tooSoon.allowed()).isFalse();
		assertThat(tooSoon.retryAfter()).isEqualTo(Duration.ofMillis(60));
		this.clock.setMillis(99);
		assertThat(hit(policy).allowed()).isFalse();
		this.clock.setMillis(100);
		assertThat(hit(policy).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void slidingWindowCounterWeighsThePreviousWindow(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.SLIDING_WINDOW_COUNTER, 10, SECOND);
		this.clock.setMillis(900);
		assertThat(admitAll(policy, 100)).isEqualTo(10);
		this.clock.setMillis(1000);
		RateLimitDecision denied = hit(policy);
		assertThat(denied.allowed()).as("the previous window still weighs fully at the boundary").isFalse();
		// the estimate 10 * (1 - f) + 0 drops below 10 once one request's worth has slid out: f = 0.1
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(100));
		this.clock.setMillis(1100);
		assertThat(admitAll(policy, 100)).isEqualTo(1);
		this.clock.setMillis(1500);
		// estimate 10 * 0.5 + 1 = 6: four more
		assertThat(admitAll(policy, 100)).isEqualTo(4);
		// documented error: the ten of [0.9 s, 1.0 s) and the five of [1.1 s, 1.5 s] share the window (0.5 s, 1.5 s]:
		// 15 = 1.5 x the limit, within the documented bound of twice the limit
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void slidingWindowCounterStaysWithinItsDocumentedErrorOnSteadyTraffic(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.SLIDING_WINDOW_COUNTER, 20, SECOND);
		List<Long> admittedAt = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			this.clock.setMillis(i * 25L); // 40 per second, twice the limit, for ten seconds
			if (hit(policy).allowed()) {
				admittedAt.add(this.clock.now());
			}
		}
		// at most the limit per aligned window, so never more than twice the limit in any window; on evenly
		// spread traffic the weighted estimate keeps every window close to the limit
		assertThat(maxInAnyWindow(admittedAt, 1_000_000L)).isLessThanOrEqualTo(2 * 20);
		assertThat(maxInAnyWindow(admittedAt, 1_000_000L)).isLessThanOrEqualTo(22);
		assertThat(admittedAt.size()).isBetween(190, 210);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void tokenBucketAndGcraBurstAndRefillExactly(Backends kind) {
		on(kind);
		for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
			RateLimitPolicy policy = RateLimitPolicy.builder("bucket-" + algorithm.code())
				.algorithm(algorithm)
				.limit(10)
				.window(SECOND)
				.burst(20)
				.build();
			this.clock.setMillis(0);
			PolicyDecision first = hit(policy).decisions().get(0);
			assertThat(first.remaining()).as(algorithm.id()).isEqualTo(19);
			assertThat(first.resetAfter()).as(algorithm.id()).isEqualTo(Duration.ofMillis(100));
			assertThat(admitAll(policy, 100)).as(algorithm.id() + " burst").isEqualTo(19);
			RateLimitDecision empty = hit(policy);
			assertThat(empty.allowed()).isFalse();
			assertThat(empty.retryAfter()).as(algorithm.id()).isEqualTo(Duration.ofMillis(100));
			assertThat(empty.decisions().get(0).resetAfter()).as(algorithm.id()).isEqualTo(Duration.ofSeconds(2));
			this.clock.setMillis(99);
			assertThat(hit(policy).allowed()).as(algorithm.id()).isFalse();
			this.clock.setMillis(100);
			assertThat(admitAll(policy, 100)).as(algorithm.id() + " one token per 100 ms").isEqualTo(1);
			this.clock.setMillis(550);
			assertThat(admitAll(policy, 100)).as(algorithm.id() + " 4.5 tokens").isEqualTo(4);
			this.clock.setMillis(60_000);
			assertThat(admitAll(policy, 100)).as(algorithm.id() + " refills to the burst, no further").isEqualTo(20);
			// a request of cost 5 needs five tokens: 500 ms
			RateLimitDecision heavy = hit(policy, "client-1", 5);
			assertThat(heavy.allowed()).isFalse();
			assertThat(heavy.retryAfter()).as(algorithm.id()).isEqualTo(Duration.ofMillis(500));
			this.clock.setMillis(60_500);
			assertThat(hit(policy, "client-1", 5).allowed()).as(algorithm.id()).isTrue();
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void concurrencyPermitsAreReleasedAndStaleOnesReclaimed(Backends kind) {
		on(kind);
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 2, Duration.ofSeconds(10));
		this.clock.setMillis(0);
		RateLimitDecision first = hit(policy);
		RateLimitDecision second = hit(policy);
		assertThat(first.allowed()).isTrue();
		assertThat(second.allowed()).isTrue();
		assertThat(second.decisions().get(0).remaining()).isZero();
		RateLimitDecision third = hit(policy);
		assertThat(third.allowed()).isFalse();
		assertThat(third.permit().holdsAny()).isFalse();
		assertThat(third.retryAfter()).as("the oldest permit is reclaimed at the latest 10 s after it was taken")
			.isEqualTo(Duration.ofSeconds(10));

		this.clock.setMillis(1000);
		first.permit().release();
		first.permit().release(); // idempotent: gives back one permit, not two
		assertThat(hit(policy).allowed()).isTrue();
		assertThat(hit(policy).allowed()).isFalse();

		// nobody releases: the permit taken at 0 s is reclaimed after 10 s, the one taken at 1 s after 11 s
		this.clock.setMillis(10_000);
		assertThat(hit(policy).allowed()).isTrue();
		assertThat(hit(policy).allowed()).isFalse();
		this.clock.setMillis(11_000);
		assertThat(hit(policy).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void deniedRequestsTakeNothing(Backends kind) {
		on(kind);
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
			this.clock.setMillis(0);
			assertThat(admitAll(policy, 3)).isEqualTo(3);
			for (int i = 0; i < 5; i++) {
				assertThat(hit(policy).allowed()).isFalse();
			}
			// the retry-after of a denial is honest: the same request passes exactly then, not a microsecond before
			RateLimitDecision denied = hit(policy);
			long wait = denied.retryAfter().toNanos() / 1000;
			this.clock.advanceMicros(wait - 1);
			assertThat(hit(policy).allowed()).as(algorithm.id() + " just before retry-after").isFalse();
			this.clock.advanceMicros(1);
			assertThat(hit(policy).allowed()).as(algorithm.id() + " at retry-after").isTrue();
		}
	}

	private static int maxInAnyWindow(List<Long> stamps, long windowMicros) {
		int max = 0;
		int start = 0;
		for (int end = 0; end < stamps.size(); end++) {
			while (stamps.get(end) - stamps.get(start) >= windowMicros) {
				start++;
			}
			max = Math.max(max, end - start + 1);
		}
		return max;
	}

}
