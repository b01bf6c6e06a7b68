package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section 2: Redis memory per identity. 100,000 identities per algorithm with a typical policy (limit 100 per
 * minute, half of it used: one request of cost 50), measured with {@code INFO memory} (the server's whole growth,
 * divided by the identities) and {@code MEMORY USAGE} on a sample of keys.
 */
final class MemoryBenchmark {

	/** The cost each identity takes: half its limit, so the sorted-set algorithms hold this many entries. */
	private static final int ENTRIES = 50;

	static final int IDENTITIES = 100_000;

	record Row(Algorithm algorithm, double bytesPerIdentity, double memoryUsage, double keyLength, String literature) {
	}

	List<Row> run(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisProbe probe = new RedisProbe(redis.uri())) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
			RateLimiter limiter = new DefaultRateLimiter(backend);
			return java.util.Arrays.stream(Algorithm.values()).map((algorithm) -> {
				redis.flushAll();
				RateLimitPolicy policy = RateLimitPolicy.builder("p")
					.algorithm(algorithm)
					.limit(100)
					.window(algorithm == Algorithm.CONCURRENCY ? Duration.ofHours(1) : Duration.ofMinutes(1))
					.build();
				long before = probe.usedMemory();
				Flux.range(0, IDENTITIES)
					.flatMap((i) -> limiter.checkAsync(RateLimitRequest.builder().add(policy, "user-" + i, ENTRIES).build()),
							256)
					.blockLast(Duration.ofMinutes(5));
				long after = probe.usedMemory();
				long sampled = 0;
				long keyLength = 0;
				int samples = 500;
				for (int i = 0; i < samples; i++) {
					String key = backend.key(policy, "user-" + (i * (IDENTITIES / samples)));
					Long usage = probe.connection().sync().memoryUsage(key);
					sampled += (usage != null) ? usage : 0;
					keyLength += key.length();
				}
				Row row = new Row(algorithm, (after - before) / (double) IDENTITIES, sampled / (double) samples,
						keyLength / (double) samples, literature(algorithm));
				System.out.printf("memory %-24s %8.1f B/identity (INFO), %8.1f B (MEMORY USAGE)%n", algorithm.id(),
						row.bytesPerIdentity(), row.memoryUsage());
				return row;
			}).toList();
		}
		finally {
			factory.destroy();
		}
	}

	private static String literature(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> "16 B (two 8-byte numbers)";
			case GCRA -> "8 B (one timestamp)";
			case SLIDING_WINDOW_LOG -> "8 B x entries = 400 B for 50 used";
			case SLIDING_WINDOW_COUNTER -> "2 counters (16 B)";
			case FIXED_WINDOW -> "16 B (counter + window)";
			case CONCURRENCY -> "8 B x permits = 400 B for 50 held";
		};
	}

	/** Records the bytes per identity and per key of each algorithm. */
	static void figures(List<Row> rows, Figures figures) {
		double plainKey = rows.stream()
			.filter((row) -> row.algorithm() == Algorithm.FIXED_WINDOW)
			.mapToDouble(Row::memoryUsage)
			.findFirst()
			.orElse(Double.NaN);
		for (Row row : rows) {
			figures.put("memory." + row.algorithm().id() + ".per-identity", row.bytesPerIdentity())
				.put("memory." + row.algorithm().id() + ".per-key", row.memoryUsage());
			if (row.algorithm() == Algorithm.SLIDING_WINDOW_LOG || row.algorithm() == Algorithm.CONCURRENCY) {
				// beyond what a key of the smallest state costs anyway
				figures.put("memory." + row.algorithm().id() + ".per-entry", (row.memoryUsage() - plainKey) / ENTRIES);
			}
		}
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("algorithm", "bytes per identity (INFO memory)", "MEMORY USAGE per key",
				"key length", "design literature");
		for (Row row : rows) {
			table.row(row.algorithm().id(), row.bytesPerIdentity(), row.memoryUsage(), row.keyLength(),
					row.literature());
		}
		return table.toString();
	}

}
