package io.github.ratelimit.benchmarks;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.benchmarks.http.BenchmarkApplication;
import io.github.ratelimit.testkit.RedisServer;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Section 4: HTTP overhead. One servlet endpoint on Tomcat, driven on loopback by a bounded load generator (a fixed
 * number of connections, each sending its next request when the previous answer arrives), with the limiter off,
 * on the local backend, and on Redis (a GCRA policy that never denies, so every request does the full work).
 * A warm-up round of all three (not reported), then two rounds in alternation; the table reports each.
 */
final class HttpBenchmark {

	static final int CONNECTIONS = 16;

	private final Duration warmup;

	private final Duration measure;

	HttpBenchmark(Duration warmup, Duration measure) {
		this.warmup = warmup;
		this.measure = measure;
	}

	record Row(String configuration, int round, double requestsPerSecond, double p50Micros, double p99Micros,
			long errors) {
	}

	/**
	 * The three configurations of the one-endpoint application, by name: the limiter off, on the local backend, on
	 * Redis (a GCRA policy that admits everything, so that every request does the whole work).
	 * @param redis the Redis server of the Redis configuration
	 * @return the command-line arguments of each configuration
	 */
	static Map<String, String[]> configurations(RedisServer redis) {
		Map<String, String[]> configurations = new java.util.LinkedHashMap<>();
		String[] policy = { "--ratelimit.policies.bench.algorithm=gcra", "--ratelimit.policies.bench.limit=1000000000",
				"--ratelimit.policies.bench.window=1m", "--ratelimit.policies.bench.key=ip",
				"--ratelimit.filter.rules[0].paths=/bench", "--ratelimit.filter.rules[0].policies=bench" };
		configurations.put("limiter off", concat(new String[] { "--ratelimit.enabled=false" }, policy));
		configurations.put("local backend", concat(new String[] {
				"--spring.autoconfigure.exclude=org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" },
				policy));
		configurations.put("Redis backend", concat(new String[] { "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port() }, policy));
		return configurations;
	}

	/**
	 * Starts the one-endpoint application on a free port.
	 * @param args the configuration's arguments
	 * @return the running application; its endpoint is {@link #endpoint}
	 */
	static ConfigurableApplicationContext start(String[] args) {
		SpringApplication application = new SpringApplication(BenchmarkApplication.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		return application.run(concat(args, new String[] { "--server.port=0", "--logging.level.root=WARN",
				"--spring.main.banner-mode=off" }));
	}

	/** The address of the application's one endpoint. */
	static URI endpoint(ConfigurableApplicationContext context) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return URI.create("http://127.0.0.1:" + port + "/bench");
	}

	List<Row> run(RedisServer redis) throws InterruptedException {
		Map<String, String[]> configurations = configurations(redis);
		List<Row> rows = new ArrayList<>();
		for (Map.Entry<String, String[]> configuration : configurations.entrySet()) {
			measure(configuration.getKey(), 0, configuration.getValue()); // warms up the JIT, not reported
		}
		for (int round = 1; round <= 2; round++) {
			for (Map.Entry<String, String[]> configuration : configurations.entrySet()) {
				rows.add(measure(configuration.getKey(), round, configuration.getValue()));
				Row row = rows.get(rows.size() - 1);
				System.out.printf("http %-14s round %d %,9.0f req/s p50 %6.0f us p99 %6.0f us%n", row.configuration(),
						round, row.requestsPerSecond(), row.p50Micros(), row.p99Micros());
			}
		}
		return rows;
	}

	private Row measure(String name, int round, String[] args) throws InterruptedException {
		try (ConfigurableApplicationContext context = start(args)) {
			URI uri = endpoint(context);
			HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
			Recorder recorder = new Recorder(10_000_000_000L, 3);
			AtomicBoolean stop = new AtomicBoolean();
			AtomicLong ops = new AtomicLong();
			AtomicLong errors = new AtomicLong();
			CountDownLatch done = new CountDownLatch(CONNECTIONS);
			for (int c = 0; c < CONNECTIONS; c++) {
				Thread worker = new Thread(() -> {
					HttpRequest request = HttpRequest.newBuilder(uri).GET().build();
					while (!stop.get()) {
						long start = System.nanoTime();
						try {
							HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
							if (response.statusCode() != 200) {
								errors.incrementAndGet();
							}
						}
						catch (Exception ex) {
							errors.incrementAndGet();
						}
						recorder.recordValue(Math.min(System.nanoTime() - start, 10_000_000_000L));
						ops.incrementAndGet();
					}
					done.countDown();
				}, "http-load-" + c);
				worker.setDaemon(true);
				worker.start();
			}
			Thread.sleep(this.warmup.toMillis());
			recorder.getIntervalHistogram();
			long before = ops.get();
			long errorsBefore = errors.get();
			long start = System.nanoTime();
			Thread.sleep(this.measure.toMillis());
			long after = ops.get();
			double seconds = (System.nanoTime() - start) / 1e9;
			Histogram latency = recorder.getIntervalHistogram();
			stop.set(true);
			done.await();
			return new Row(name, round, (after - before) / seconds, latency.getValueAtPercentile(50) / 1000.0,
					latency.getValueAtPercentile(99) / 1000.0, errors.get() - errorsBefore);
		}
	}

	private static String[] concat(String[] a, String[] b) {
		String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

	static String report(List<Row> rows) {
		Markdown table = new Markdown("configuration", "round", "requests/s", "p50 µs", "p99 µs", "non-200 answers");
		for (Row row : rows) {
			table.row(row.configuration(), row.round(), row.requestsPerSecond(), row.p50Micros(), row.p99Micros(),
					row.errors());
		}
		StringBuilder out = new StringBuilder("#### Measured with the Java driver\n\n").append(CONNECTIONS)
			.append(" connections of the JDK's `HttpClient` on loopback, each sending its next request when the previous")
			.append(" answer arrives.\n\n")
			.append(table);
		Markdown added = new Markdown("configuration", "mean requests/s", "vs off", "mean p50 µs", "added p50 µs",
				"mean p99 µs", "added p99 µs");
		double[] off = mean(rows, "limiter off");
		for (String name : List.of("limiter off", "local backend", "Redis backend")) {
			double[] m = mean(rows, name);
			added.row(name, m[0], String.format("%.0f%%", 100 * m[0] / off[0]), m[1], m[1] - off[1], m[2], m[2] - off[2]);
		}
		return out.append("\nMeans of the rounds, and what the limiter adds:\n\n").append(added).toString();
	}

	/** Records what the Redis and local backends add to p50 and keep of the throughput (Java driver). */
	static void figures(List<Row> rows, Figures figures) {
		double[] off = mean(rows, "limiter off");
		for (String name : List.of("local backend", "Redis backend")) {
			double[] m = mean(rows, name);
			String at = "http.java." + Figures.part(name) + ".";
			figures.put(at + "added-p50", m[1] - off[1]).put(at + "vs-off", m[0] / off[0]);
		}
	}

	private static double[] mean(List<Row> rows, String name) {
		double[] sums = new double[3];
		int n = 0;
		for (Row row : rows) {
			if (row.configuration().equals(name)) {
				sums[0] += row.requestsPerSecond();
				sums[1] += row.p50Micros();
				sums[2] += row.p99Micros();
				n++;
			}
		}
		for (int i = 0; i < 3; i++) {
			sums[i] /= n;
		}
		return sums;
	}

}
