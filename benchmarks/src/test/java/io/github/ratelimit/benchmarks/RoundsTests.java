package io.github.ratelimit.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Tests for {@link Rounds}: the rotated order of a round, medians, per-round ratios and their range.
 */
class RoundsTests {

	@Test
	void everyContenderMovesOnePlaceAheadFromOneRoundToTheNext() {
		List<String> contenders = List.of("raw", "ours", "bucket4j");
		assertThat(Rounds.rotated(contenders, 0)).containsExactly("raw", "ours", "bucket4j");
		assertThat(Rounds.rotated(contenders, 1)).containsExactly("ours", "bucket4j", "raw");
		assertThat(Rounds.rotated(contenders, 2)).containsExactly("bucket4j", "raw", "ours");
		assertThat(Rounds.rotated(contenders, 3)).isEqualTo(Rounds.rotated(contenders, 0));
	}

	@Test
	void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwoAndOfNoneIsNaN() {
		double[] values = { 3, 1, 2 };
		assertThat(Rounds.median(values)).isEqualTo(2);
		assertThat(values).containsExactly(3, 1, 2);
		assertThat(Rounds.median(new double[] { 4, 1, 3, 2 })).isEqualTo(2.5);
		assertThat(Rounds.median(new double[0])).isNaN();
	}

	@Test
	void aRatioIsTakenRoundByRoundAndItsRangeIsTheLowestToTheHighest() {
		double[] ours = { 90, 260, 240 };
		double[] raw = { 100, 200, 300 };
		double[] ratios = Rounds.ratios(3, (round) -> ours[round], (round) -> raw[round]);
		assertThat(ratios).containsExactly(new double[] { 0.9, 1.3, 0.8 }, within(1e-9));
		assertThat(Rounds.range(ratios, Figures::percent)).isEqualTo("80% to 130%");
		assertThat(Rounds.range(new double[] { 1.5 }, Figures::times)).isEqualTo("one round");
		assertThat(Rounds.range(new double[0], Figures::times)).isEqualTo("n/a");
	}

}
