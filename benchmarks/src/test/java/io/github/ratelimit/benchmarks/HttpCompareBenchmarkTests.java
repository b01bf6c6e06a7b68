package io.github.ratelimit.benchmarks;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link HttpCompareBenchmark}'s report: means of the rounds, each contender against its own stack's
 * limiter-off twin, and figures per request.
 */
class HttpCompareBenchmarkTests {

	private static HttpCompareBenchmark.Row row(String name, int round, double rps, long requests, long non2xx,
			long commands) {
		WrkBenchmark.Row wrk = new WrkBenchmark.Row(name, round, requests, rps, 1_000 * round, 0, 2_000, 3_000, non2xx,
				0, 0);
		return new HttpCompareBenchmark.Row(name, round, wrk, commands, 10.0 * requests, 20.0 * requests, 25);
	}

	@Test
	void comparesEachContenderWithItsOwnLimiterOffTwinOverTheRounds(@TempDir Path directory) {
		List<HttpCompareBenchmark.Contender> contenders = List.of(
				new HttpCompareBenchmark.Contender("a off", "a off", false, List.of()),
				new HttpCompareBenchmark.Contender("a on", "a off", true, List.of()),
				new HttpCompareBenchmark.Contender("b off", "b off", false, List.of()));
		List<HttpCompareBenchmark.Row> rows = List.of(row("a off", 1, 1_000, 10_000, 0, 0),
				row("a off", 2, 3_000, 30_000, 0, 0), row("a on", 1, 500, 5_000, 2_500, 5_000),
				row("a on", 2, 1_500, 15_000, 7_500, 15_000), row("b off", 1, 9_000, 90_000, 0, 0));
		HttpCompareBenchmark.Outcome outcome = new HttpCompareBenchmark.Outcome(
				new WrkBinary("wrk", "wrk 4.1.0", "the PATH"), "wrk -t2 -c16 -d10s --latency", contenders, rows,
				"1 / 1 / 1 before, 1 / 1 / 1 after", new HttpCompareBenchmark.Warmup(20, 5, 120));
		String report = HttpCompareBenchmark.report(outcome);
		// a on: mean 1,000 req/s against a off's 2,000; half its answers refused; 20 µs of the application's CPU and
		// one command per request
		assertThat(report).contains("| a on | 1,000 | 50% | 1,500 | 2,000 | 3,000 | 50% | 0.00 | 20.0 | 1.00 | 10.0 |");
		assertThat(report).contains("| a on | 2 | 25 | 1,500 |");
		assertThat(report).contains("of at least 20 s, then until");
		assertThat(report).contains("| b off | 9,000 | 100% |");
		Figures figures = Figures.load(directory);
		HttpCompareBenchmark.figures(outcome, figures);
		assertThat(figures.text("http.compare.a-on.vs-off")).isEqualTo("0.5");
	}

	@Test
	void theWarmUpEndsWhenTwoConsecutiveStepsAreWithinFivePercentOfEachOther() {
		assertThat(HttpCompareBenchmark.settled(Double.MAX_VALUE, 100)).isFalse(); // the first step
		assertThat(HttpCompareBenchmark.settled(100, 96)).isTrue();
		assertThat(HttpCompareBenchmark.settled(100, 104)).isTrue();
		assertThat(HttpCompareBenchmark.settled(100, 90)).isFalse(); // still falling: compiling
		assertThat(HttpCompareBenchmark.settled(100, 130)).isFalse(); // a burst of other work, not a settled JIT
	}

}
