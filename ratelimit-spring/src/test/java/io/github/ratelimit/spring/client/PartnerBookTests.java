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
		assertThat(this.book.reserve(3000, 0.5)).isZero(); // reset: the partner's next response says more
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
		assertThat(this.book.reserve(2000, 0.5)).isZero();
	}

}
