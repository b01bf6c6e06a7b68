package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.lettuce.core.Range;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 6 (zset): what the two algorithms that keep one sorted-set member per unit of quota taken
 * (sliding-window-log, concurrency) cost Redis as a key grows to the cap, {@link RateLimitPolicy#MAX_ENTRY_LIMIT}.
 * Per limit N: the memory of a full key ({@code MEMORY USAGE key SAMPLES 0}, every member counted) and the server's
 * own time ({@code INFO commandstats}, the {@code usec} of the one script call) of the calls whose work grows with
 * the members they touch (taking N at once on an empty key, giving those N back, dropping N expired members,
 * freeing the key) and of those whose work does not (a denial at full, one more unit on a key holding N - 1). Every
 * call goes through the engine ({@link DefaultRateLimiter} on {@link RedisRateLimitBackend}) at an explicit time, so
 * that "a window later" needs no waiting.
 */
final class ZsetCostBenchmark {

	static final List<Integer> SIZES = List.of(100, 500, 1_000, 2_000, 5_000, 10_000,
			(int) RateLimitPolicy.MAX_ENTRY_LIMIT);

	private static final List<Algorithm> ALGORITHMS = List.of(Algorithm.SLIDING_WINDOW_LOG, Algorithm.CONCURRENCY);

	private static final Duration WINDOW = Duration.ofHours(1);

	/**
	 * Smallest key whose {@code used_memory} growth is reported: below it, the few kilobytes the server's own buffers
	 * move by between two reads drown the key.
	 */
	private static final int GROWTH_MIN_SIZE = 1_000;

	private static final String[] SCRIPT_COMMANDS = { "evalsha", "eval" };

	/**
	 * One algorithm at one limit; times in microseconds of Redis server time, the median of the repetitions
	 * (and the longest of them for taking N at once).
	 */
	record Row(Algorithm algorithm, int size, String encoding, long keyBytes, long memoryGrowth, int repetitions,
			double take, double takeLongest, double deny, double oneMore, double giveBack, double dropExpired,
			double free) {

		double bytesPerMember() {
			return this.keyBytes / (double) this.size;
		}

	}

	List<Row> run(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		List<Row> rows = new ArrayList<>();
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
			RateLimiter limiter = new DefaultRateLimiter(backend);
			for (Algorithm algorithm : ALGORITHMS) {
				for (int size : SIZES) {
					redis.flushAll();
					Row row = measure(probe, backend, limiter, algorithm, size);
					System.out.printf(
							"zset %-18s N=%-7d %-9s %6.1f B/member, take %9.0f us (longest %9.0f), deny %5.0f, "
									+ "one more %5.0f, give back %8.0f, drop expired %8.0f, free %7.0f%n",
							algorithm.id(), size, row.encoding(), row.bytesPerMember(), row.take(), row.takeLongest(),
							row.deny(), row.oneMore(), row.giveBack(), row.dropExpired(), row.free());
					rows.add(row);
				}
			}
		}
		finally {
			factory.destroy();
		}
		return rows;
	}

	private static Row measure(RedisProbe probe, RedisRateLimitBackend backend, RateLimiter limiter,
			Algorithm algorithm, int size) {
		RateLimitPolicy policy = RateLimitPolicy.builder("zset-" + size)
			.algorithm(algorithm)
			.limit(size)
			.window(WINDOW)
			.build();
		long now = System.currentTimeMillis() * 1000;
		long windowLater = now + WINDOW.toNanos() / 1000;
		// loads the scripts (the policy's own, and the driver that gives back), so that no measured call falls back
		// from EVALSHA to EVAL
		check(limiter, policy, "warm-up", 1, now, true).reversal().release();
		int repetitions = (size >= 100_000) ? 5 : 15;
		long[] take = new long[repetitions];
		long[] deny = new long[repetitions];
		long[] oneMore = new long[repetitions];
		long[] giveBack = new long[repetitions];
		long[] dropExpired = new long[repetitions];
		long[] free = new long[repetitions];
		String encoding = null;
		long keyBytes = 0;
		long memoryGrowth = 0;
		for (int r = 0; r < repetitions; r++) {
			String identity = "id-" + r;
			String key = backend.key(policy, identity);
			long usedBefore = probe.usedMemory();
			RateLimitDecision[] full = new RateLimitDecision[1];
			take[r] = serverTime(probe, () -> full[0] = check(limiter, policy, identity, size, now, true),
					SCRIPT_COMMANDS);
			expectMembers(probe, key, size);
			if (r == 0) {
				memoryGrowth = probe.usedMemory() - usedBefore;
				keyBytes = memoryUsage(probe, key);
				encoding = probe.connection().sync().objectEncoding(key);
			}
			deny[r] = serverTime(probe, () -> check(limiter, policy, identity, 1, now, false), SCRIPT_COMMANDS);
			// a concurrency request gives its permits back when it completes; a sliding-window-log request gives
			// back what it took only when reversed (a later check of the same request denied it)
			Permit back = (algorithm == Algorithm.CONCURRENCY) ? full[0].permit() : full[0].reversal();
			giveBack[r] = serverTime(probe, () -> {
				back.release();
				return null;
			}, SCRIPT_COMMANDS);
			expectMembers(probe, key, 0);
			if (size > 1) {
				check(limiter, policy, identity, size - 1, now, true);
			}
			oneMore[r] = serverTime(probe, () -> check(limiter, policy, identity, 1, now, true), SCRIPT_COMMANDS);
			expectMembers(probe, key, size);
			// a window later every member has expired: the next call drops them all before it counts
			dropExpired[r] = serverTime(probe, () -> check(limiter, policy, identity, 1, windowLater, true),
					SCRIPT_COMMANDS);
			expectMembers(probe, key, 1);
			// what Redis does when a full key expires: free every member at once (as DEL does)
			String other = identity + "-free";
			check(limiter, policy, other, size, now, true);
			free[r] = serverTime(probe, () -> probe.connection().sync().del(backend.key(policy, other)), "del");
		}
		return new Row(algorithm, size, encoding, keyBytes, memoryGrowth, repetitions, median(take), longest(take),
				median(deny), median(oneMore), median(giveBack), median(dropExpired), median(free));
	}

	private static RateLimitDecision check(RateLimiter limiter, RateLimitPolicy policy, String identity, long cost,
			long atMicros, boolean allowed) {
		RateLimitDecision decision = limiter
			.check(RateLimitRequest.builder().add(policy, identity, cost).at(atMicros).build());
		if (decision.allowed() != allowed) {
			throw new IllegalStateException("Expected " + (allowed ? "admitted" : "denied") + ": " + decision);
		}
		return decision;
	}

	/** The server's own time of the one call {@code call} makes of the given commands. */
	private static long serverTime(RedisProbe probe, Supplier<?> call, String... commands) {
		RedisProbe.CommandTime before = probe.commandTime(commands);
		call.get();
		RedisProbe.CommandTime spent = probe.commandTime(commands).since(before);
		if (spent.calls() != 1) {
			throw new IllegalStateException("Expected one call of " + Arrays.toString(commands) + " but saw "
					+ spent.calls());
		}
		return spent.micros();
	}

	/** The entries a key holds: its members scored with a time, not the sequence's member {@code #} (below 0). */
	private static void expectMembers(RedisProbe probe, String key, long members) {
		long actual = probe.connection()
			.sync()
			.zcount(key, Range.from(Range.Boundary.including(0), Range.Boundary.unbounded()));
		if (actual != members) {
			throw new IllegalStateException(key + " holds " + actual + " members, expected " + members);
		}
	}

	/** {@code MEMORY USAGE key SAMPLES 0}: every member counted, not the default estimate from 5 of them. */
	private static long memoryUsage(RedisProbe probe, String key) {
		StringCodec codec = StringCodec.UTF8;
		Long bytes = probe.connection()
			.sync()
			.dispatch(CommandType.MEMORY, new IntegerOutput<>(codec),
					new CommandArgs<>(codec).add("USAGE").addKey(key).add("SAMPLES").add(0));
		return (bytes != null) ? bytes : 0;
	}

	private static double median(long[] values) {
		long[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
	}

	private static double longest(long[] values) {
		return Arrays.stream(values).max().orElse(0);
	}

	static String report(List<Row> rows) {
		StringBuilder out = new StringBuilder();
		out.append("Memory of a full key (limit N, N members):\n\n");
		Markdown memory = new Markdown("algorithm", "N", "encoding", "MEMORY USAGE of the key, bytes",
				"bytes per member", "used_memory growth per member, bytes");
		for (Row row : rows) {
			Object growth = (row.size() >= GROWTH_MIN_SIZE) ? row.memoryGrowth() / (double) row.size() : "n/a";
			memory.row(row.algorithm().id(), count(row.size()), row.encoding(), count(row.keyBytes()),
					row.bytesPerMember(), growth);
		}
		out.append(memory).append('\n');
		out.append("Redis server time of one call (`INFO commandstats` usec), µs, median of the runs:\n\n");
		Markdown time = new Markdown("algorithm", "N", "runs", "take N at once (empty key)", "longest",
				"per member", "denied at full", "one more (cost 1, N - 1 held)", "give back N", "per member",
				"drop N expired", "free the full key (DEL)");
		for (Row row : rows) {
			time.row(row.algorithm().id(), count(row.size()), row.repetitions(), row.take(), row.takeLongest(),
					row.take() / row.size(), row.deny(), row.oneMore(), row.giveBack(), row.giveBack() / row.size(),
					row.dropExpired(), row.free());
		}
		out.append(time).append('\n');
		out.append("Where the calls whose work grows with N cross 1 ms and 2 ms (interpolated between the limits "
				+ "measured):\n\n");
		Markdown crossings = new Markdown("algorithm", "call", "µs per member at the cap", "1 ms at N ≈",
				"2 ms at N ≈");
		for (Algorithm algorithm : ALGORITHMS) {
			List<Row> own = rows.stream().filter((row) -> row.algorithm() == algorithm).toList();
			crossings(crossings, algorithm, "take N at once", own, Row::take);
			crossings(crossings, algorithm, "give back N", own, Row::giveBack);
			crossings(crossings, algorithm, "drop N expired", own, Row::dropExpired);
			crossings(crossings, algorithm, "free the key (DEL)", own, Row::free);
		}
		out.append(crossings);
		return out.toString();
	}

	private static void crossings(Markdown table, Algorithm algorithm, String call, List<Row> rows,
			ToDoubleFunction<Row> micros) {
		Row largest = rows.get(rows.size() - 1);
		table.row(algorithm.id(), call, micros.applyAsDouble(largest) / largest.size(),
				crossing(rows, micros, 1_000), crossing(rows, micros, 2_000));
	}

	/** The limit at which a call first takes {@code threshold} µs, linearly between the two sizes around it. */
	static String crossing(List<Row> rows, ToDoubleFunction<Row> micros, double threshold) {
		for (int i = 0; i < rows.size(); i++) {
			double value = micros.applyAsDouble(rows.get(i));
			if (value >= threshold) {
				if (i == 0) {
					return "below " + count(rows.get(0).size());
				}
				Row below = rows.get(i - 1);
				double under = micros.applyAsDouble(below);
				double size = below.size()
						+ (threshold - under) * (rows.get(i).size() - below.size()) / (value - under);
				return count(roundToTwoDigits(size));
			}
		}
		return "above " + count(rows.get(rows.size() - 1).size());
	}

	private static long roundToTwoDigits(double value) {
		double scale = Math.pow(10, Math.max(0, Math.floor(Math.log10(value)) - 1));
		return Math.round(value / scale) * (long) scale;
	}

	private static String count(long value) {
		return String.format(Locale.ROOT, "%,d", value);
	}

}
