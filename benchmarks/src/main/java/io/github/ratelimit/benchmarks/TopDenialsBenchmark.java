package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongFunction;

import io.github.ratelimit.spring.RedisTopDenials;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.testkit.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Section {@code top}: what the top denials cost. {@link TopDenials#record(String, String)} (one denial, on the
 * request path) per identity pattern and thread count, at the default capacity (64); the heap one policy's full
 * summary takes; and the Redis memory of one instance's published summary of a policy.
 */
final class TopDenialsBenchmark {

	static final int CAPACITY = 64;

	private static final int POLICIES = 1_000;

	private final Duration measure;

	TopDenialsBenchmark(boolean quick) {
		this.measure = Duration.ofSeconds(quick ? 1 : 3);
	}

	/** One pattern's cost: nanoseconds per record, per thread. */
	record Row(String pattern, int threads, double recordsPerSecond, double nanosPerRecord) {
	}

	/** The costs, the heap per policy and the Redis bytes per published summary. */
	record Outcome(List<Row> rows, double heapBytesPerPolicy, long redisBytesPerSummary) {
	}

	Outcome run(RedisServer redis) throws InterruptedException {
		List<Row> rows = new ArrayList<>();
		for (int threads : new int[] { 1, 2 }) {
			rows.add(measure("one identity (a counter kept)", threads, (n) -> "ip:203.0.113.7"));
			rows.add(measure("every denial a new identity (evicts)", threads, (n) -> "ip:" + n));
			rows.add(measure("8 of 10 from 10 hot, 2 from a million", threads, TopDenialsBenchmark::mixed));
		}
		return new Outcome(rows, heapPerPolicy(), redisBytes(redis));
	}

	private static String mixed(long n) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		return (random.nextInt(10) < 8) ? "ip:hot-" + random.nextInt(10) : "ip:" + random.nextInt(1_000_000);
	}

	private Row measure(String pattern, int threads, LongFunction<String> identities) throws InterruptedException {
		TopDenials top = new TopDenials(CAPACITY, Duration.ofMinutes(1));
		// warm-up, not reported
		run(top, threads, identities, Duration.ofMillis(500));
		long[] timed = run(top, threads, identities, this.measure);
		double nanosPerRecord = timed[1] / (double) timed[0];
		return new Row(pattern, threads, threads * 1e9 / nanosPerRecord, nanosPerRecord);
	}

	/**
	 * Records from {@code threads} threads for a while, each batch of identities made before its records are timed.
	 * @return the records, and the nanoseconds the threads spent recording (summed)
	 */
	private static long[] run(TopDenials top, int threads, LongFunction<String> identities, Duration duration)
			throws InterruptedException {
		LongAdder records = new LongAdder();
		LongAdder nanos = new LongAdder();
		long end = System.nanoTime() + duration.toNanos();
		List<Thread> running = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			long offset = t * 1_000_000_000L;
			Thread thread = new Thread(() -> {
				String[] batch = new String[1024];
				long n = offset;
				while (System.nanoTime() < end) {
					for (int i = 0; i < batch.length; i++) {
						batch[i] = identities.apply(n++);
					}
					long started = System.nanoTime();
					for (String identity : batch) {
						top.record("api", identity);
					}
					nanos.add(System.nanoTime() - started);
					records.add(batch.length);
				}
			});
			running.add(thread);
			thread.start();
		}
		for (Thread thread : running) {
			thread.join();
		}
		return new long[] { records.sum(), nanos.sum() };
	}

	/** Heap after {@value #POLICIES} policies' summaries are full, less before, per policy (one half window full). */
	private static double heapPerPolicy() {
		long before = usedHeap();
		TopDenials top = new TopDenials(CAPACITY, Duration.ofMinutes(1));
		for (int p = 0; p < POLICIES; p++) {
			for (int i = 0; i < CAPACITY; i++) {
				top.record("policy-" + p, "ip:198.51.100." + i);
			}
		}
		long after = usedHeap();
		if (top.counters() != POLICIES * CAPACITY) {
			throw new IllegalStateException("Expected full summaries but kept " + top.counters());
		}
		return (after - before) / (double) POLICIES;
	}

	private static long usedHeap() {
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

	/** {@code MEMORY USAGE} of a policy's hash holding one instance's summary of {@value #CAPACITY} identities. */
	private static long redisBytes(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			TopDenials top = new TopDenials(CAPACITY, Duration.ofMinutes(1));
			for (int i = 0; i < 10 * CAPACITY; i++) {
				top.record("api", "ip:198.51.100." + (i % (2 * CAPACITY)));
			}
			new RedisTopDenials(factory, "bench-top:", top, CAPACITY, Duration.ofSeconds(2)).publish();
			Long bytes = redis.commands().memoryUsage("bench-top:top:api");
			redis.commands().del("bench-top:top:api");
			return (bytes != null) ? bytes : -1;
		}
		finally {
			factory.destroy();
		}
	}

	static String report(Outcome outcome) {
		Markdown table = new Markdown("identities", "threads", "records per second", "ns per record (per thread)");
		for (Row row : outcome.rows()) {
			table.row(row.pattern(), row.threads(), row.recordsPerSecond(), row.nanosPerRecord());
		}
		return table + "\nHeap per policy, one half window full (" + CAPACITY + " identities like `ip:198.51.100.7`; "
				+ "a policy holds at most two halves): about " + Math.round(outcome.heapBytesPerPolicy())
				+ " bytes. Redis, one instance's published summary of a policy (" + CAPACITY + " identities, "
				+ "`MEMORY USAGE` of the hash): " + outcome.redisBytesPerSummary() + " bytes.\n";
	}

	static void figures(Outcome outcome, Figures figures) {
		for (Row row : outcome.rows()) {
			if (row.threads() == 1 && row.pattern().startsWith("every")) {
				figures.put("top.evicting.ns", row.nanosPerRecord());
			}
		}
		figures.put("top.heap.per-policy", outcome.heapBytesPerPolicy());
		figures.put("top.redis.per-summary", outcome.redisBytesPerSummary());
	}

}
