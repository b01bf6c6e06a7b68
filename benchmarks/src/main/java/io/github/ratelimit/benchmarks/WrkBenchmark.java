package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.testkit.RedisServer;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * Section 4b ({@code http-wrk}): the HTTP overhead of section 4 measured with a load tool that is not ours,
 * {@code wrk} (see {@link WrkBinary}). The same one-endpoint application with the limiter off, on the local backend
 * and on Redis (a {@code redis-server} of this section's own), started afresh for every run; per run a warm-up
 * with wrk (not reported), then the measured {@code wrk --latency} run, whose latency distribution and requests per
 * second are parsed. A warm-up round of all three first (not reported), then the rounds, the configurations taking
 * turns. When wrk is not available the section says why and skips.
 */
final class WrkBenchmark {

	/** The heading the section's part of {@code http.md} starts with (the Java driver's part comes before it). */
	static final String HEADING = "#### Measured with wrk";

	private static final Pattern PERCENTILE = Pattern.compile("^\\s*(50|75|90|99)%\\s+([\\d.]+)(us|ms|s)\\s*$",
			Pattern.MULTILINE);

	private static final Pattern REQUESTS_PER_SECOND = Pattern.compile("^Requests/sec:\\s+([\\d.]+)",
			Pattern.MULTILINE);

	private static final Pattern REQUESTS = Pattern.compile("^\\s*(\\d+) requests in ", Pattern.MULTILINE);

	private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses:\\s+(\\d+)");

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	/** The commands a decision on the Redis backend sends. */
	private static final List<String> SCRIPT_COMMANDS = List.of("evalsha", "eval", "fcall", "fcall_ro");

	private final Duration warmup;

	private final int seconds;

	private final int threads = Integer.getInteger("bench.wrk.threads", 2);

	private final int connections = Integer.getInteger("bench.wrk.connections", HttpBenchmark.CONNECTIONS);

	private final int rounds = Integer.getInteger("bench.wrk.rounds", 3);

	/**
	 * A wrk run of each configuration.
	 * @param warmup the warm-up before each measured run
	 * @param quick whether to measure 2 s per run instead of 10 s ({@code -Dbench.wrk.seconds} sets it)
	 */
	WrkBenchmark(Duration warmup, boolean quick) {
		this.warmup = warmup;
		this.seconds = Integer.getInteger("bench.wrk.seconds", quick ? 2 : 10);
	}

	/**
	 * One measured wrk run; latencies in microseconds.
	 * @param configuration the configuration measured
	 * @param round the round
	 * @param requests the requests wrk completed
	 * @param requestsPerSecond wrk's requests per second
	 * @param p50 the median latency
	 * @param p75 the 75th percentile
	 * @param p90 the 90th percentile
	 * @param p99 the 99th percentile
	 * @param non2xx the answers that were not 2xx or 3xx
	 * @param socketErrors wrk's connect, read, write errors and timeouts
	 * @param redisCalls the script calls Redis counted during the run ({@code INFO commandstats}): one per request
	 * when Redis made every decision, fewer when decisions were made without it (the breaker open)
	 */
	record Row(String configuration, int round, long requests, double requestsPerSecond, double p50, double p75,
			double p90, double p99, long non2xx, long socketErrors, long redisCalls) {

		Row withRedisCalls(long calls) {
			return new Row(this.configuration, this.round, this.requests, this.requestsPerSecond, this.p50, this.p75,
					this.p90, this.p99, this.non2xx, this.socketErrors, calls);
		}

		double redisCallsPerRequest() {
			return (double) this.redisCalls / Math.max(1, this.requests);
		}

	}

	/**
	 * What the section measured, or why it skipped.
	 * @param wrk the wrk used (its version), or the reason it was not available
	 * @param threads wrk's threads
	 * @param connections wrk's connections
	 * @param seconds the duration of a measured run
	 * @param warmupSeconds the duration of the warm-up run before it
	 * @param rows the measured runs, none when skipped
	 */
	record Outcome(WrkBinary wrk, int threads, int connections, int seconds, int warmupSeconds, List<Row> rows) {

		/** The measured command line, without the address. */
		String command() {
			return String.format(Locale.ROOT, "wrk -t%d -c%d -d%ds --latency", this.threads, this.connections,
					this.seconds);
		}

	}

	Outcome run() throws IOException, InterruptedException {
		WrkBinary wrk = WrkBinary.find();
		int warmupSeconds = (int) Math.max(1, this.warmup.toSeconds());
		List<Row> rows = new ArrayList<>();
		Outcome outcome = new Outcome(wrk, this.threads, this.connections, this.seconds, warmupSeconds, rows);
		if (!wrk.available()) {
			System.out.println("http-wrk: skipped, wrk is not available: " + wrk.version());
			return outcome;
		}
		System.out.println("http-wrk: " + wrk.version() + " (" + wrk.origin() + "), " + outcome.command());
		try (RedisServer redis = RedisServer.start(); RedisProbe probe = new RedisProbe(redis.uri())) {
			Map<String, String[]> configurations = HttpBenchmark.configurations(redis);
			for (int round = 0; round <= this.rounds; round++) {
				for (Map.Entry<String, String[]> configuration : configurations.entrySet()) {
					try (ConfigurableApplicationContext context = HttpBenchmark.start(configuration.getValue())) {
						URI uri = HttpBenchmark.endpoint(context);
						wrk(wrk, uri, warmupSeconds); // warm-up, not reported
						if (round == 0) {
							continue; // the warm-up round: the JIT's, for all three
						}
						RedisProbe.Snapshot before = probe.snapshot();
						String output = wrk(wrk, uri, this.seconds);
						RedisProbe.Snapshot after = probe.snapshot();
						long calls = SCRIPT_COMMANDS.stream().mapToLong((command) -> after.callsSince(before, command)).sum();
						Row row = parse(configuration.getKey(), round, output).withRedisCalls(calls);
						rows.add(row);
						System.out.printf(Locale.ROOT,
								"http-wrk %-14s round %d %,9.0f req/s p50 %6.0f us p90 %6.0f us p99 %6.0f us%n",
								row.configuration(), round, row.requestsPerSecond(), row.p50(), row.p90(), row.p99());
					}
				}
			}
		}
		return outcome;
	}

	private String wrk(WrkBinary wrk, URI uri, int duration) throws IOException, InterruptedException {
		return run(wrk, List.of("-t" + this.threads, "-c" + this.connections), uri, duration);
	}

	/**
	 * One {@code wrk --latency} run.
	 * @param wrk the wrk
	 * @param options wrk's options before the duration (threads, connections, a script)
	 * @param uri the address loaded
	 * @param duration the seconds it runs
	 * @return what wrk printed
	 */
	static String run(WrkBinary wrk, List<String> options, URI uri, int duration)
			throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(wrk.command()));
		command.addAll(options);
		command.addAll(List.of("-d" + duration + "s", "--latency", uri.toString()));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(duration + 30L, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IllegalStateException("wrk did not end 30 s after its duration");
		}
		if (process.exitValue() != 0) {
			throw new IllegalStateException("wrk failed (exit " + process.exitValue() + "):\n" + output);
		}
		return output;
	}

	/**
	 * Reads one {@code wrk --latency} report.
	 * @param configuration the configuration measured
	 * @param round the round
	 * @param output what wrk printed
	 * @return the row
	 */
	static Row parse(String configuration, int round, String output) {
		double[] percentiles = new double[4];
		int found = 0;
		Matcher percentile = PERCENTILE.matcher(output);
		while (percentile.find()) {
			int index = List.of("50", "75", "90", "99").indexOf(percentile.group(1));
			double value = Double.parseDouble(percentile.group(2));
			percentiles[index] = switch (percentile.group(3)) {
				case "us" -> value;
				case "ms" -> value * 1_000;
				default -> value * 1_000_000;
			};
			found++;
		}
		Matcher rate = REQUESTS_PER_SECOND.matcher(output);
		Matcher requests = REQUESTS.matcher(output);
		if (found != 4 || !rate.find() || !requests.find()) {
			throw new IllegalStateException("not a wrk --latency report:\n" + output);
		}
		Matcher non2xx = NON_2XX.matcher(output);
		Matcher socket = SOCKET_ERRORS.matcher(output);
		long socketErrors = 0;
		if (socket.find()) {
			for (int group = 1; group <= 4; group++) {
				socketErrors += Long.parseLong(socket.group(group));
			}
		}
		return new Row(configuration, round, Long.parseLong(requests.group(1)), Double.parseDouble(rate.group(1)),
				percentiles[0], percentiles[1], percentiles[2], percentiles[3],
				non2xx.find() ? Long.parseLong(non2xx.group(1)) : 0, socketErrors, 0);
	}

	static String report(Outcome outcome) {
		StringBuilder out = new StringBuilder(HEADING).append("\n\n");
		if (outcome.rows().isEmpty()) {
			return out.append("Skipped: wrk is not available here (")
				.append(outcome.wrk().version())
				.append("). Install the distribution's `wrk`, or point `-Dbench.wrk` at one.\n")
				.toString();
		}
		out.append(String.format(Locale.ROOT,
				"`%s` (%s), `%s` against each configuration: %d threads, %d connections on loopback, each connection"
						+ " sending its next request when the"
						+ " previous answer arrives. wrk, the application (Tomcat) and `redis-server` share the machine's"
						+ " %d cores. Each run on a freshly started application, after a warm-up of %d s with wrk (not"
						+ " reported); a warm-up round of all three first (not reported). Latency percentiles as wrk"
						+ " prints them (10 µs resolution). Redis calls per request: the script calls `redis-server` counted"
						+ " during the run over wrk's requests; below 1.00 on the Redis backend, natural batching folded"
						+ " concurrent decisions into fewer script calls (decisions made without Redis, over the budget"
						+ " or with the breaker open, would be logged by the application).%n%n",
				outcome.wrk().version(), outcome.wrk().origin(), outcome.command(),
				outcome.threads(), outcome.connections(), Runtime.getRuntime().availableProcessors(),
				outcome.warmupSeconds()));
		Markdown table = new Markdown("configuration", "round", "requests/s", "p50 µs", "p90 µs", "p99 µs",
				"non-2xx answers", "socket errors", "Redis calls per request");
		for (Row row : outcome.rows()) {
			table.row(row.configuration(), row.round(), row.requestsPerSecond(), row.p50(), row.p90(), row.p99(),
					row.non2xx(), row.socketErrors(), row.redisCallsPerRequest());
		}
		out.append(table).append("\nMeans of the rounds, and what the limiter adds (wrk):\n\n");
		Markdown added = new Markdown("configuration", "mean requests/s", "vs off", "mean p50 µs", "added p50 µs",
				"mean p90 µs", "mean p99 µs", "added p99 µs");
		double[] off = mean(outcome.rows(), "limiter off");
		for (String name : List.of("limiter off", "local backend", "Redis backend")) {
			double[] m = mean(outcome.rows(), name);
			added.row(name, m[0], String.format(Locale.ROOT, "%.0f%%", 100 * m[0] / off[0]), m[1], m[1] - off[1],
					m[2], m[3], m[3] - off[3]);
		}
		return out.append(added).toString();
	}

	/** Records what the Redis and local backends add to p50 and keep of the throughput, for {@link Targets}. */
	static void figures(Outcome outcome, Figures figures) {
		if (outcome.rows().isEmpty()) {
			return;
		}
		double[] off = mean(outcome.rows(), "limiter off");
		for (String name : List.of("local backend", "Redis backend")) {
			double[] m = mean(outcome.rows(), name);
			String at = "http.wrk." + Figures.part(name) + ".";
			figures.put(at + "added-p50", m[1] - off[1]).put(at + "vs-off", m[0] / off[0]);
		}
	}

	/** Requests per second, p50, p90 and p99 of one configuration, averaged over its rounds. */
	private static double[] mean(List<Row> rows, String name) {
		return means(rows, (row) -> row.configuration().equals(name),
				List.of(Row::requestsPerSecond, Row::p50, Row::p90, Row::p99));
	}

	/** Each field's mean over the rows that {@code which} selects (0 when none). */
	static <R> double[] means(List<R> rows, Predicate<R> which, List<ToDoubleFunction<R>> fields) {
		return fields.stream()
			.mapToDouble((field) -> rows.stream().filter(which).mapToDouble(field).average().orElse(0))
			.toArray();
	}

	/**
	 * Puts this section's part into the content of {@code http.md}: the part before {@link #HEADING} (the Java
	 * driver's, written by section 4) is kept, the rest replaced.
	 * @param existing the file's content, empty if there is none
	 * @param section this section's report
	 * @return the new content
	 */
	static String merge(String existing, String section) {
		int at = existing.startsWith(HEADING) ? 0 : existing.indexOf("\n" + HEADING);
		String kept = (at < 0) ? existing : existing.substring(0, at);
		kept = kept.stripTrailing();
		return kept.isEmpty() ? section : kept + "\n\n" + section;
	}

}
