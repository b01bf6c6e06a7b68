package io.github.ratelimit.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Tests for {@link EngineBenchmark}'s figures and report from measurements made up here: a ratio is the median of
 * the rounds' ratios, not the ratio of the medians, and a contender a narrowed run left out is reported as such.
 */
class EngineBenchmarkTests {

	/** Per round: the ceiling, our token bucket and bucket4j (ops/s); ours over the ceiling 0.9, 1.3 and 0.8. */
	private static final double[][] OPS = { { 100, 90, 50 }, { 200, 260, 100 }, { 300, 240, 200 } };

	private static final List<String> CONTENDERS = List.of(EngineBenchmark.RAW, "ours token-bucket",
			EngineBenchmark.BUCKET4J);

	@Test
	void aRatioIsTheMedianOfTheRoundsRatios(@TempDir Path results) {
		Figures figures = Figures.load(results);
		EngineBenchmark.figures(outcome(), figures);
		String at = "engine.allowed.non-blocking-x256.token-bucket.";
		// the ratio of the medians would be 240 / 200 = 1.2
		assertThat(figures.number(at + "ceiling")).isCloseTo(0.9, within(1e-9));
		assertThat(figures.number(at + "ceiling-lowest")).isCloseTo(0.8, within(1e-9));
		assertThat(figures.number(at + "ceiling-highest")).isCloseTo(1.3, within(1e-9));
		assertThat(figures.number(at + "bucket4j")).isCloseTo(1.8, within(1e-9));
		assertThat(figures.number(at + "ops")).isEqualTo(240);
		assertThat(figures.number(at + "calls")).isEqualTo(0.25);
		assertThat(figures.number(at + "redis-cpu")).isCloseTo(0.5, within(1e-9));
		assertThat(figures.number("engine.allowed.non-blocking-x256.raw.ops")).isEqualTo(200);
		assertThat(figures.has("engine.allowed.non-blocking-x256.gcra.ceiling")).isFalse();
		assertThat(figures.text("engine.rounds")).isEqualTo("3");
	}

	@Test
	void theReportShowsTheMedianRatioWithItsRangeAndEveryRound() {
		String report = EngineBenchmark.report(outcome());
		assertThat(report).contains("ran in 3 rounds").contains("settles for 1 s and measures 3 s");
		assertThat(report).contains("| ours token-bucket | blocking x1 | 240 |");
		assertThat(report).contains("| blocking x1 | 90% | 80% to 130% | 1.80x | 1.20x to 2.60x | n/a | n/a |");
		assertThat(report).contains("| blocking x1 | 2 | 200 | 260 | 100 |");
	}

	private static EngineBenchmark.Outcome outcome() {
		List<EngineBenchmark.Measurements> measured = new ArrayList<>();
		for (EngineBenchmark.Mode mode : EngineBenchmark.MODES) {
			for (int c = 0; c < CONTENDERS.size(); c++) {
				List<LoadDriver.Result> rounds = new ArrayList<>();
				for (double[] round : OPS) {
					boolean ours = c == 1;
					rounds.add(result(CONTENDERS.get(c), mode.name(), round[c], ours ? 5 : 10, ours ? 0.25 : 1));
				}
				measured.add(new EngineBenchmark.Measurements(CONTENDERS.get(c), mode.name(), rounds));
			}
		}
		return new EngineBenchmark.Outcome(Map.of(Scenario.ALLOWED, measured), 3, Duration.ofSeconds(1),
				Duration.ofSeconds(1), Duration.ofSeconds(3));
	}

	private static LoadDriver.Result result(String contender, String mode, double opsPerSecond, double redisCpu,
			double roundTrips) {
		Histogram latency = new Histogram(3);
		latency.recordValue(100_000);
		return new LoadDriver.Result(contender, mode, (long) opsPerSecond, 1.0, latency, 10, redisCpu, roundTrips, 0);
	}

}
