package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Drives a contender for a fixed time, blocking from N threads or non-blocking with N calls in flight, and measures
 * throughput, latency percentiles (HdrHistogram), client CPU per decision and, through {@link RedisProbe}, Redis
 * CPU and round trips per decision.
 */
final class LoadDriver {

	private final Duration warmup;

	private final Duration measure;

	LoadDriver(Duration warmup, Duration measure) {
		this.warmup = warmup;
		this.measure = measure;
	}

	record Result(String contender, String mode, long ops, double seconds, Histogram latency, double clientCpuMicros,
			double redisCpuMicros, double roundTrips, long denied) {

		double opsPerSecond() {
			return this.ops / this.seconds;
		}

		double p(double percentile) {
			return this.latency.getValueAtPercentile(percentile) / 1000.0;
		}

	}

	Result blocking(Contender contender, int threads, RedisProbe probe) throws InterruptedException {
		return run(contender, "blocking x" + threads, probe, (recorder, stop, ops, denied) -> {
			List<Thread> workers = new ArrayList<>();
			CountDownLatch done = new CountDownLatch(threads);
			for (int t = 0; t < threads; t++) {
				Thread worker = new Thread(() -> {
					ThreadLocalRandom random = ThreadLocalRandom.current();
					while (!stop.get()) {
						int identity = random.nextInt(Scenario.IDENTITIES);
						long start = System.nanoTime();
						boolean admitted = contender.acquire(identity);
						recorder.recordValue(Math.min(System.nanoTime() - start, 10_000_000_000L));
						ops.incrementAndGet();
						if (!admitted) {
							denied.incrementAndGet();
						}
					}
					done.countDown();
				}, "load-" + t);
				worker.setDaemon(true);
				workers.add(worker);
				worker.start();
			}
			return done;
		});
	}

	Result nonBlocking(Contender contender, int inFlight, RedisProbe probe) throws InterruptedException {
		return run(contender, "non-blocking x" + inFlight, probe, (recorder, stop, ops, denied) -> {
			CountDownLatch done = new CountDownLatch(inFlight);
			for (int i = 0; i < inFlight; i++) {
				next(contender, recorder, stop, ops, denied, done);
			}
			return done;
		});
	}

	private static void next(Contender contender, Recorder recorder, AtomicBoolean stop, AtomicLong ops,
			AtomicLong denied, CountDownLatch done) {
		if (stop.get()) {
			done.countDown();
			return;
		}
		int identity = ThreadLocalRandom.current().nextInt(Scenario.IDENTITIES);
		long start = System.nanoTime();
		contender.acquireAsync(identity).whenComplete((admitted, error) -> {
			recorder.recordValue(Math.min(System.nanoTime() - start, 10_000_000_000L));
			ops.incrementAndGet();
			if (error != null || !admitted) {
				denied.incrementAndGet();
			}
			next(contender, recorder, stop, ops, denied, done);
		});
	}

	private interface Load {

		CountDownLatch start(Recorder recorder, AtomicBoolean stop, AtomicLong ops, AtomicLong denied);

	}

	private Result run(Contender contender, String mode, RedisProbe probe, Load load) throws InterruptedException {
		Recorder recorder = new Recorder(10_000_000_000L, 3);
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong ops = new AtomicLong();
		AtomicLong denied = new AtomicLong();
		CountDownLatch done = load.start(recorder, stop, ops, denied);
		Thread.sleep(this.warmup.toMillis());
		recorder.getIntervalHistogram(); // drop the warm-up
		RedisProbe.Snapshot redisBefore = probe.snapshot();
		long cpuBefore = processCpuNanos();
		long opsBefore = ops.get();
		long deniedBefore = denied.get();
		long start = System.nanoTime();
		Thread.sleep(this.measure.toMillis());
		long opsAfter = ops.get();
		long deniedAfter = denied.get();
		double seconds = (System.nanoTime() - start) / 1e9;
		long cpuAfter = processCpuNanos();
		RedisProbe.Snapshot redisAfter = probe.snapshot();
		Histogram latency = recorder.getIntervalHistogram();
		stop.set(true);
		done.await(30, TimeUnit.SECONDS);
		long measured = opsAfter - opsBefore;
		return new Result(contender.name(), mode, measured, seconds, latency,
				(cpuAfter - cpuBefore) / 1000.0 / Math.max(1, measured),
				redisAfter.cpuMicrosSince(redisBefore) / Math.max(1, measured),
				contender.roundTrips((command) -> redisAfter.callsSince(redisBefore, command)) / (double) Math.max(1, measured), deniedAfter - deniedBefore);
	}

	static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

}
