package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 3: accuracy. Traces with explicit time replayed through every algorithm on the local backend and on
 * Redis: the most requests admitted in any window of the policy's length (per source), and the share of decisions
 * that differ from an exact sliding window log on the same trace.
 */
final class AccuracyBenchmark {

	static final long LIMIT = 100;

	static final long WINDOW_MICROS = 60_000_000L;

	static final long T0 = 29_000_000L * 60_000_000L; // aligned on a minute

	record Request(long time, String source) {
	}

	record Row(String trace, Algorithm algorithm, int requests, int admitted, long maxInWindow, double overLimit,
			double differFromLog, boolean redisAgrees) {
	}

	static Map<String, List<Request>> traces() {
		Map<String, List<Request>> traces = new LinkedHashMap<>();
		List<Request> boundary = new ArrayList<>();
		for (int i = 0; i < 2 * LIMIT; i++) {
			// 2 x limit in the two seconds around a window boundary (at T0 + 10 min)
			boundary.add(new Request(T0 + 600_000_000L - 1_000_000L + i * 10_000L, "s"));
		}
		traces.put("window-boundary burst (2x limit)", boundary);
		for (double load : new double[] { 0.5, 1.0, 2.0 }) {
			List<Request> steady = new ArrayList<>();
			Random random = new Random(7);
			long gap = (long) (WINDOW_MICROS / (LIMIT * load));
			for (long t = T0 + 1; t < T0 + 10 * WINDOW_MICROS; t += gap) {
				steady.add(new Request(t + random.nextInt((int) Math.max(1, gap / 10)), "s"));
			}
			traces.put("steady " + load + "x limit", steady);
		}
		traces.put("heavy-tailed, 1,000 sources", heavyTailed());
		return traces;
	}

	/** Sources with Pareto-distributed rates (a few very heavy), Poisson arrivals, ten minutes. */
	private static List<Request> heavyTailed() {
		Random random = new Random(11);
		int sources = 1000;
		double[] rates = new double[sources];
		for (int s = 0; s < sources; s++) {
			double pareto = 1.0 / Math.pow(1 - random.nextDouble(), 1 / 1.2); // alpha 1.2, minimum 1
			rates[s] = Math.min(pareto * 3, 1000) / WINDOW_MICROS; // requests per microsecond
		}
		List<Request> requests = new ArrayList<>();
		for (int s = 0; s < sources; s++) {
			long t = T0;
			while (true) {
				t += (long) (-Math.log(1 - random.nextDouble()) / rates[s]) + 1;
				if (t >= T0 + 10 * WINDOW_MICROS) {
					break;
				}
				requests.add(new Request(t, "src-" + s));
			}
		}
		requests.sort((a, b) -> Long.compare(a.time(), b.time()));
		return requests;
	}

	List<Row> run(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		List<Row> rows = new ArrayList<>();
		try {
			for (Map.Entry<String, List<Request>> trace : traces().entrySet()) {
				boolean[] exact = replay(new LocalRateLimitBackend(1_000_000, LocalRateLimitBackend.systemClock()),
						Algorithm.SLIDING_WINDOW_LOG, trace.getValue());
				for (Algorithm algorithm : Algorithm.values()) {
					if (algorithm == Algorithm.CONCURRENCY) {
						continue; // limits requests in flight, not per window
					}
					boolean[] local = replay(new LocalRateLimitBackend(1_000_000, LocalRateLimitBackend.systemClock()),
							algorithm, trace.getValue());
					redis.flushAll();
					boolean[] onRedis = replayBySource(new RedisRateLimitBackend(factory), algorithm, trace.getValue());
					int differ = 0;
					int admitted = 0;
					for (int i = 0; i < local.length; i++) {
						differ += (local[i] != exact[i]) ? 1 : 0;
						admitted += local[i] ? 1 : 0;
					}
					Row row = new Row(trace.getKey(), algorithm, local.length, admitted,
							maxInWindow(trace.getValue(), local), 100.0 * overLimit(trace.getValue(), local) / admitted,
							100.0 * differ / local.length, java.util.Arrays.equals(local, onRedis));
					rows.add(row);
					System.out.printf("accuracy %-32s %-24s max %d in a window, %.3f%% over, %.3f%% differ, redis agrees: %s%n",
							row.trace(), algorithm.id(), row.maxInWindow(), row.overLimit(), row.differFromLog(),
							row.redisAgrees());
				}
			}
		}
		finally {
			factory.destroy();
		}
		return rows;
	}

	private static boolean[] replay(RateLimitBackend backend, Algorithm algorithm, List<Request> trace) {
		RateLimiter limiter = new DefaultRateLimiter(backend);
		RateLimitPolicy policy = policy(algorithm);
		boolean[] admitted = new boolean[trace.size()];
		for (int i = 0; i < trace.size(); i++) {
			Request request = trace.get(i);
			admitted[i] = limiter.check(RateLimitRequest.builder().add(policy, request.source()).at(request.time()).build())
				.allowed();
		}
		return admitted;
	}

	/**
	 * Replays with the sources in parallel (64 at a time) and each source's requests in order: with explicit time
	 * only the order within a source matters.
	 */
	private static boolean[] replayBySource(RateLimitBackend backend, Algorithm algorithm, List<Request> trace) {
		RateLimiter limiter = new DefaultRateLimiter(backend);
		RateLimitPolicy policy = policy(algorithm);
		Map<String, List<Integer>> bySource = new LinkedHashMap<>();
		for (int i = 0; i < trace.size(); i++) {
			bySource.computeIfAbsent(trace.get(i).source(), (s) -> new ArrayList<>()).add(i);
		}
		boolean[] admitted = new boolean[trace.size()];
		reactor.core.publisher.Flux.fromIterable(bySource.values())
			.flatMap((indexes) -> reactor.core.publisher.Flux.fromIterable(indexes)
				.concatMap((i) -> limiter
					.checkAsync(RateLimitRequest.builder()
						.add(policy, trace.get(i).source())
						.at(trace.get(i).time())
						.build())
					.doOnNext((decision) -> admitted[i] = decision.allowed())), 64)
			.blockLast(Duration.ofMinutes(10));
		return admitted;
	}

	private static RateLimitPolicy policy(Algorithm algorithm) {
		return RateLimitPolicy.builder("acc-" + algorithm.code())
			.algorithm(algorithm)
			.limit(LIMIT)
			.window(Duration.ofNanos(WINDOW_MICROS * 1000))
			.build();
	}

	/**
	 * Admissions that, counted with the same source's admissions of the trailing window, exceed the limit: the
	 * requests an exact limiter would have refused.
	 */
	static long overLimit(List<Request> trace, boolean[] admitted) {
		Map<String, java.util.ArrayDeque<Long>> recent = new HashMap<>();
		long over = 0;
		for (int i = 0; i < trace.size(); i++) {
			if (!admitted[i]) {
				continue;
			}
			java.util.ArrayDeque<Long> times = recent.computeIfAbsent(trace.get(i).source(), (s) -> new java.util.ArrayDeque<>());
			long now = trace.get(i).time();
			while (!times.isEmpty() && now - times.peekFirst() >= WINDOW_MICROS) {
				times.pollFirst();
			}
			times.addLast(now);
			if (times.size() > LIMIT) {
				over++;
			}
		}
		return over;
	}

	/** The most admitted requests of one source within any window of the policy's length. */
	static long maxInWindow(List<Request> trace, boolean[] admitted) {
		Map<String, List<Long>> bySource = new HashMap<>();
		for (int i = 0; i < trace.size(); i++) {
			if (admitted[i]) {
				bySource.computeIfAbsent(trace.get(i).source(), (s) -> new ArrayList<>()).add(trace.get(i).time());
			}
		}
		long max = 0;
		for (List<Long> times : bySource.values()) {
			int start = 0;
			for (int end = 0; end < times.size(); end++) {
				while (times.get(end) - times.get(start) >= WINDOW_MICROS) {
					start++;
				}
				max = Math.max(max, end - start + 1);
			}
		}
		return max;
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("trace", "algorithm", "requests", "admitted",
				"most in any 1-min window (limit 100)", "admissions over the limit", "decisions differing from the exact log",
				"Redis = local");
		for (Row row : rows) {
			table.row(row.trace(), row.algorithm().id(), row.requests(), row.admitted(), row.maxInWindow(),
					String.format("%.3f%%", row.overLimit()), String.format("%.3f%%", row.differFromLog()),
					row.redisAgrees() ? "yes" : "NO");
		}
		return table.toString();
	}

}
