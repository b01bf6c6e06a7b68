package io.github.ratelimit.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link WrkBenchmark}'s reading of wrk's report and its part of {@code http.md}.
 */
class WrkBenchmarkTests {

	/** What wrk 4.1.0 printed for a run against a server answering 404, with a socket error line added. */
	private static final String REPORT = """
			Running 1s test @ http://127.0.0.1:18777/missing
			  1 threads and 2 connections
			  Thread Stats   Avg      Stdev     Max   +/- Stdev
			    Latency    30.04ms   43.55ms 176.60ms   81.80%
			    Req/Sec   340.71    408.10     1.24k    85.71%
			  Latency Distribution
			     50%  812.00us
			     75%   51.79ms
			     90%  104.33ms
			     99%    1.20s
			  319 requests in 1.04s, 161.99KB read
			  Socket errors: connect 0, read 2, write 1, timeout 4
			  Non-2xx or 3xx responses: 319
			Requests/sec:    305.35
			Transfer/sec:    155.06KB
			""";

	@Test
	void readsTheLatencyDistributionInMicrosecondsAndTheCounts() {
		WrkBenchmark.Row row = WrkBenchmark.parse("limiter off", 2, REPORT);
		assertThat(row.configuration()).isEqualTo("limiter off");
		assertThat(row.round()).isEqualTo(2);
		assertThat(row.p50()).isEqualTo(812.0);
		assertThat(row.p75()).isEqualTo(51_790.0);
		assertThat(row.p90()).isEqualTo(104_330.0);
		assertThat(row.p99()).isEqualTo(1_200_000.0);
		assertThat(row.requests()).isEqualTo(319);
		assertThat(row.requestsPerSecond()).isEqualTo(305.35);
		assertThat(row.non2xx()).isEqualTo(319);
		assertThat(row.socketErrors()).isEqualTo(7);
		assertThat(row.withRedisCalls(638).redisCallsPerRequest()).isEqualTo(2.0);
	}

	@Test
	void aReportWithoutTheDistributionIsRefused() {
		String withoutLatency = REPORT.replace("  Latency Distribution\n", "").replaceAll("(?m)^\\s+\\d\\d%.*\n", "");
		assertThatIllegalStateException().isThrownBy(() -> WrkBenchmark.parse("limiter off", 1, withoutLatency))
			.withMessageContaining("not a wrk --latency report");
	}

	@Test
	void mergeKeepsTheJavaDriversPartAndReplacesItsOwn() {
		String java = "#### Measured with the Java driver\n\n| a |\n|---|\n| 1 |\n";
		String first = WrkBenchmark.merge(java, WrkBenchmark.HEADING + "\n\nfirst run\n");
		assertThat(first).isEqualTo(java + "\n" + WrkBenchmark.HEADING + "\n\nfirst run\n");
		String second = WrkBenchmark.merge(first, WrkBenchmark.HEADING + "\n\nsecond run\n");
		assertThat(second).isEqualTo(java + "\n" + WrkBenchmark.HEADING + "\n\nsecond run\n");
		assertThat(WrkBenchmark.merge("", WrkBenchmark.HEADING + "\n\nalone\n"))
			.isEqualTo(WrkBenchmark.HEADING + "\n\nalone\n");
		assertThat(WrkBenchmark.merge(WrkBenchmark.HEADING + "\n\nold\n", WrkBenchmark.HEADING + "\n\nnew\n"))
			.isEqualTo(WrkBenchmark.HEADING + "\n\nnew\n");
	}

}
