package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The pacing rule on a clock of our own. */
class PartnerBookTests {

	private final PartnerBook book = new PartnerBook();

	private static PartnerResponse quota(long remaining, long resetSeconds, long limit) {
		return new PartnerResponse(200, List.of(new PartnerQuota("p", "", remaining, resetSeconds, limit, 10L)), null);
	}

	@Test
	void aboveTheThresholdCallsGoAtOnce() {
		this.book.learn(0, quota(8, 10, 10));
		assertThat(this.book.reserve(0, 0.5)).isZero();
		assertThat(this.book.reserve(0, 0.5)).isZero();
		assertThat(this.book.reserve(0, 0.5)).isZero();
	}

	@Test
	void belowTheThresholdTheQuotaLeftIsSpreadOverTheTimeToReset() {
		this.book.learn(0, quota(4, 8, 10));
		List<Long> turns = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			turns.add(this.book.reserve(0, 0.5));
		}
		// 4 left over 8 s: one every 2 s; the fifth after the reset
		assertThat(turns).containsExactly(0L, 2000L, 4000L, 6000L, 8000L);
	}

	@Test
	void noneLeftWaitsForTheResetThenOneWindowShareApart() {
		this.book.learn(0, quota(0, 3, 10));
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(3000);
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(4000);
		// past the reset a newcomer does not skip the queue: it takes the next spaced turn
		assertThat(this.book.reserve(3000, 0.5)).isEqualTo(2000);
		// the partner's next response (a new window) frees calls again
		this.book.learn(5000, quota(9, 10, 10));
		assertThat(this.book.reserve(5000, 0.5)).isZero();
	}

	@Test
	void aCallRefusedForItsBudgetTakesNoTurn() {
		this.book.learn(0, quota(2, 10, 10));
		assertThat(this.book.reserve(0, 1, 100)).isZero();
		// the next turn (5 s) exceeds a budget of 100 ms: refused, many times, without using the quota up
		for (int i = 0; i < 50; i++) {
			assertThat(this.book.reserve(0, 1, 100)).isEqualTo(5000);
		}
		assertThat(this.book.describe(0)).extractingByKey("quotas").asString().contains("remaining=1");
		assertThat(this.book.reserve(5000, 1, 100)).isZero();
	}

	@Test
	void withoutAKnownWindowQueuedCallsAreSpacedByTheObservedPeriodOverTheLimit() {
		// X-RateLimit-*: a limit of 10, none left, reset in 20 s, no window said
		this.book.learn(0, new PartnerResponse(429,
				List.of(new PartnerQuota(PartnerHeaders.LEGACY_POLICY, "", 0, 20, 10L, null)), null));
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(20_000);
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(22_000);
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(24_000);
	}

	@Test
	void callsReleasedAfterARetryAfterAreSpreadNotAllAtItsEnd() {
		this.book.learn(0, quota(0, 10, 10)); // 1 s apart once none is left
		this.book.learn(0, new PartnerResponse(429, List.of(), Duration.ofSeconds(30)));
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(30_000);
		assertThat(this.book.reserve(0, 0.5)).isEqualTo(31_000);
		assertThat(this.book.reserve(40_000, 0.5)).isZero(); // the queue has drained, the entry expired
	}

	@Test
	void aPartnerThatReportsNoLimitIsPacedOnlyWhenNoneIsLeft() {
		this.book.learn(0, new PartnerResponse(200, List.of(new PartnerQuota("p", "", 1000, 3600, null, null)), null));
		for (int i = 0; i < 20; i++) {
			assertThat(this.book.reserve(0, 0)).isZero();
		}
		// the highest remaining seen stands for the limit: pace-below applies to it
		assertThat(this.book.describe(0)).extractingByKey("quotas").asString().contains("limit=1000");
	}

	@Test
	void aLateResponseOfThePreviousWindowLowersTheEstimateButNeverRaisesIt() {
		this.book.learn(0, quota(3, 10, 10));
		// a response sent before the reset arrives after a new window was learned
		this.book.learn(10_000, quota(9, 10, 10));
		this.book.learn(10_100, quota(8, 0, 10));
		assertThat(this.book.describe(10_100)).extractingByKey("quotas").asString().contains("remaining=8");
		// a drifting reset (t one second apart) in the same window is not a new window
		this.book.learn(10_200, quota(9, 9, 10));
		assertThat(this.book.describe(10_200)).extractingByKey("quotas").asString().contains("remaining=8");
	}

	@Test
	void theEstimateNeverExceedsWhatThePartnerSaidInTheSameWindow() {
		this.book.learn(0, quota(5, 10, 10));
		this.book.reserve(0, 0);
		this.book.reserve(0, 0);
		this.book.learn(100, quota(5, 10, 10)); // a stale figure, other calls in flight
		assertThat(this.book.describe(100)).extractingByKey("quotas")
			.asString()
			.contains("remaining=3");
	}

	@Test
	void aRetryAfterHoldsEveryCall() {
		this.book.learn(0, new PartnerResponse(429, List.of(), Duration.ofSeconds(2)));
		assertThat(this.book.reserve(500, 0.5)).isEqualTo(1500);
		// released one probe a second (nothing else known), then free
		assertThat(this.book.reserve(2000, 0.5)).isEqualTo(1000);
		assertThat(this.book.reserve(4000, 0.5)).isZero();
	}

}
