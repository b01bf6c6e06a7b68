package io.github.ratelimit.benchmarks;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.autoconfigure.RedisBackendProperties;
import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.testkit.RedisBinary;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * The tables of section 5 ({@link FailureBenchmark}): latency per phase and failure mode, recovery, enforcement
 * outcomes per phase, and the unguarded baseline.
 */
final class FailureReport {

	private static final int IN_A_ROW = FailureBenchmark.IN_A_ROW;

	private FailureReport() {
	}

	static String report(FailureBenchmark.Result result) {
		RedisBackendProperties redis = StarterLimiter.DEFAULTS.redis();
		RedisBackendProperties.CircuitBreaker breaker = redis.circuitBreaker();
		StringBuilder out = new StringBuilder(BenchmarkMain.environment());
		out.append(String.format(Locale.ROOT, "| system load average (1 min), start / end of the section | %.1f / %.1f |%n%n",
				result.loadAverageAtStart(), result.loadAverageAtEnd()));
		out.append("redis-server ")
			.append(RedisBinary.get().version())
			.append(" (")
			.append(RedisBinary.get().origin())
			.append("); a process of its own, killed, frozen and slowed down. Guarded limiter as the starter builds it by")
			.append(" default: ")
			.append(String.format(Locale.ROOT,
					"budget %d ms, breaker count-based over %d calls, at least %d calls, opens at %.0f%% failures, open %d ms,"
							+ " %d calls in half-open; Lettuce reconnect delay at most %d ms; client command timeout 60 s.",
					redis.timeout().toMillis(), breaker.slidingWindowSize(), breaker.minimumNumberOfCalls(),
					breaker.failureRateThreshold(), breaker.waitDurationInOpenState().toMillis(),
					breaker.permittedNumberOfCallsInHalfOpenState(), redis.maxReconnectDelay().toMillis()))
			.append(String.format(Locale.ROOT,
					" Three GCRA policies (1000 per second per identity, 1000 identities each), one per failure mode,"
							+ " taken in turn on one limiter; blocking: 8 threads in a closed loop, non-blocking: at most 64"
							+ " calls in flight; offered load at most %,.0f decisions per second either way. Each run: %d s"
							+ " warm-up, %d s healthy, %d s of failure (slow: %d ms added each way by a loopback proxy), %d s"
							+ " with Redis back. A decision belongs to the phase in which it started; one still in flight when the"
							+ " failure began belongs to the failure's first second.%n",
					result.rate(), FailureBenchmark.WARMUP.toSeconds(), FailureBenchmark.HEALTHY.toSeconds(),
					FailureBenchmark.OUTAGE.toSeconds(), Fault.SLOW_LATENCY.toMillis(),
					FailureBenchmark.AFTER.toSeconds()));
		out.append("\n#### Cold start: the section's first ").append(FailureBenchmark.COLD_START.toSeconds())
			.append(" s of load per path, Redis healthy (")
			.append(result.freshJvm() ? "the first work of this JVM" : "after the other sections in this JVM")
			.append(")\n\n")
			.append(coldStart(result.coldStarts()));
		out.append("\n#### Latency a decision sees\n\n").append(latency(result.guarded()));
		out.append("\n#### Recovery\n\n").append(recovery(result.guarded()));
		out.append("\n#### Who decided, per phase (all three policies)\n\n").append(shares(result.guarded()));
		out.append("\n#### Baseline: the unguarded limiter on Spring Data Redis' defaults\n\n")
			.append(unguarded(result.unguarded()));
		return out.toString();
	}

	private static String coldStart(List<FailureBenchmark.ColdStart> runs) {
		Markdown table = new Markdown("path", "decisions", "made by Redis", "over the budget", "breaker opened",
				"GC pauses (longest ms)", "p50 µs", "p99 µs", "max µs");
		for (FailureBenchmark.ColdStart run : runs) {
			DecisionLog.Phase phase = DecisionLog.Phase.BEFORE;
			Histogram h = run.log().latency(phase);
			long all = run.log().decisions(phase);
			table.row(run.path().label(), all, pct(run.log().outcomes(phase, Enforcement.ENFORCED), all),
					run.log().causes(phase, DecisionLog.Cause.TIMEOUT), run.breakerOpenings() + " times",
					run.gcPauses() + " (" + run.gcLongestMillis() + ")", micros(h.getValueAtPercentile(50)),
					micros(h.getValueAtPercentile(99)), micros(h.getMaxValue()));
		}
		return table.toString();
	}

	private static String latency(List<FailureBenchmark.GuardedRun> runs) {
		Markdown table = new Markdown("failure", "path", "phase", "failure mode", "decisions", "p50 µs", "p99 µs",
				"p99.9 µs", "max µs");
		for (FailureBenchmark.GuardedRun run : runs) {
			for (DecisionLog.Phase phase : List.of(DecisionLog.Phase.FIRST_SECOND, DecisionLog.Phase.BREAKER_OPEN)) {
				for (FailureMode mode : FailureMode.values()) {
					Histogram h = run.log().latency(phase, mode.ordinal());
					table.row(run.fault().label(), run.path().label(), phase.label(), mode.id(), h.getTotalCount(),
							micros(h.getValueAtPercentile(50)), micros(h.getValueAtPercentile(99)),
							micros(h.getValueAtPercentile(99.9)), micros(h.getMaxValue()));
				}
			}
		}
		return table.toString();
	}

	private static String recovery(List<FailureBenchmark.GuardedRun> runs) {
		Markdown table = new Markdown("failure", "path", "healthy p50 / p99 µs", "breaker when failing",
				"breaker opened, ms after failure",
				"half-open trials during failure", "Redis back after, s", "Lettuce reconnected, ms after return",
				"breaker closed, ms after return", IN_A_ROW + " in a row by Redis, ms after return",
				"breaker opened again after return", "longest GC pause, ms");
		for (FailureBenchmark.GuardedRun run : runs) {
			Histogram healthy = run.log().latency(DecisionLog.Phase.BEFORE);
			table.row(run.fault().label(), run.path().label(),
					Markdown.format(micros(healthy.getValueAtPercentile(50))) + " / "
							+ Markdown.format(micros(healthy.getValueAtPercentile(99))),
					run.stateAtFailure().name().toLowerCase(Locale.ROOT), millis(run.breakerOpenedNanos()), run.halfOpenTrials(),
					String.format(Locale.ROOT, "%.2f", run.outageNanos() / 1e9), millis(run.reconnectedNanos()),
					millis(run.breakerClosedNanos()),
					(run.toEnforcementNanos() < 0) ? "not within " + FailureBenchmark.AFTER.toSeconds() + " s"
							: millis(run.toEnforcementNanos()),
					run.reopenedAfterReturn() + " times", run.gcLongestMillis());
		}
		return table.toString();
	}

	private static String shares(List<FailureBenchmark.GuardedRun> runs) {
		Markdown table = new Markdown("failure", "path", "phase", "decisions", "enforced", "failed open",
				"failed closed", "local", "why not Redis: budget / breaker open / error", "threw");
		for (FailureBenchmark.GuardedRun run : runs) {
			for (DecisionLog.Phase phase : DecisionLog.Phase.values()) {
				DecisionLog log = run.log();
				long all = log.decisions(phase);
				table.row(run.fault().label(), run.path().label(), phase.label(), all,
						pct(log.outcomes(phase, Enforcement.ENFORCED), all),
						pct(log.outcomes(phase, Enforcement.FAILED_OPEN), all),
						pct(log.outcomes(phase, Enforcement.FAILED_CLOSED), all),
						pct(log.outcomes(phase, Enforcement.LOCAL_FALLBACK), all),
						log.causes(phase, DecisionLog.Cause.TIMEOUT) + " / "
								+ log.causes(phase, DecisionLog.Cause.BREAKER_OPEN) + " / "
								+ log.causes(phase, DecisionLog.Cause.ERROR),
						log.thrown(phase));
			}
		}
		StringBuilder out = new StringBuilder(table.toString());
		boolean any = false;
		for (FailureBenchmark.GuardedRun run : runs) {
			for (Map.Entry<String, Long> error : run.log().errors().entrySet()) {
				if (!any) {
					out.append("\nErrors (not timeouts) Redis failed with:\n\n");
					any = true;
				}
				out.append("- ").append(run.fault().label()).append(", ").append(run.path().label()).append(", ")
					.append(error.getKey()).append(": ").append(error.getValue()).append('\n');
			}
		}
		return out.toString();
	}

	private static String unguarded(List<FailureBenchmark.UnguardedRun> runs) {
		Markdown table = new Markdown("failure", "path", "command timeout", "calls during the failure",
				"threw before Redis was back (longest ms)", "decided before Redis was back",
				"still waiting " + FailureBenchmark.OUTAGE.toSeconds() + " s into the failure (oldest ms)",
				"longest call, ms", "first decision, ms after return", "still waiting at the end (after, s)",
				"load threads ended after closing");
		for (FailureBenchmark.UnguardedRun run : runs) {
			table.row(run.fault().label(), run.path().label(), run.commandTimeoutMillis() / 1000 + " s", run.calls(),
					run.beforeReturn().threw() + " (" + millis(run.beforeReturn().longestThrownNanos()) + ")",
					run.beforeReturn().decided(),
					run.atReturn().count() + " (" + millis(run.atReturn().oldestNanos()) + ")",
					millis(Math.max(run.overall().longestNanos(), run.atEnd().oldestNanos())),
					(run.firstDecisionNanos() < 0) ? "none" : millis(run.firstDecisionNanos()),
					run.atEnd().count() + " ("
							+ String.format(Locale.ROOT, "%.1f", run.observedNanos() / 1e9) + ")",
					run.threadsEnded() ? "yes" : "no");
		}
		return table.toString();
	}

	private static double micros(long nanos) {
		return nanos / 1000.0;
	}

	private static String millis(@Nullable Long nanos) {
		if (nanos == null) {
			return "-";
		}
		return String.format(Locale.ROOT, "%,.1f", nanos / 1e6);
	}

	private static String pct(long part, long all) {
		return String.format(Locale.ROOT, "%.1f%%", 100.0 * part / Math.max(1, all));
	}

}
