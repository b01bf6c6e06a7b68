package io.github.ratelimit.gateway;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.testkit.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway with its own {@code RedisRateLimiter} against the gateway with the {@link PolicyRateLimiter}, same
 * backend, same route shape, same load, in one run; a route without limiter gives the baseline. Not part of the
 * build's tests: run it with
 * {@code ./mvnw -pl ratelimit-spring-cloud-gateway -am test -Dtest=GatewayBenchmark -Dgateway.benchmark=true
 * -Dsurefire.failIfNoSpecifiedTests=false}. It prints a Markdown table and writes it to
 * {@code target/gateway-benchmark.md}.
 * <p>
 * Load: {@value #CLIENTS} client threads on loopback, each sending its next request when the previous one is
 * answered, over {@value #IDENTITIES} identities (the {@code X-Client} header); a warm-up round of every route, then
 * {@value #ROUNDS} measured rounds of {@value #SECONDS} s per route, the routes taking turns. Redis calls per request
 * come from the server's {@code total_commands_processed} over the phase.
 */
@EnabledIfSystemProperty(named = "gateway.benchmark", matches = "true")
class GatewayBenchmark {

	private static final int CLIENTS = 16;

	private static final int IDENTITIES = 100;

	private static final int ROUNDS = 3;

	private static final int SECONDS = 15;

	private static final List<String> ROUTES = List.of("off", "redis-rate-limiter", "policy-rate-limiter");

	@Test
	void gatewayWithRedisRateLimiterAgainstGatewayWithPolicyRateLimiter() throws Exception {
		try (RedisServer redis = RedisServer.start(); Backend backend = Backend.start()) {
			String version = redis.commands().info("server").lines()
				.filter((line) -> line.startsWith("redis_version:"))
				.findFirst()
				.orElse("redis_version:?")
				.substring("redis_version:".length())
				.trim();
			try (ConfigurableApplicationContext gateway = GatewayTestApplication.start(backend,
					"--spring.profiles.active=benchmark", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port())) {
				int port = GatewayTestApplication.port(gateway);
				for (String route : ROUTES) {
					phase(port, route, SECONDS, redis); // warm-up, not reported
				}
				StringBuilder table = new StringBuilder();
				table.append("Redis ").append(version).append(", ").append(CLIENTS).append(" clients, ")
					.append(SECONDS).append(" s per route and round\n\n");
				table.append("| route | round | requests/s | p50 µs | p99 µs | Redis calls (EVALSHA) per request "
						+ "| Redis commands per request, with the scripts' own | non-200 |\n");
				table.append("|---|---|---|---|---|---|---|---|\n");
				for (int round = 1; round <= ROUNDS; round++) {
					for (String route : ROUTES) {
						Result result = phase(port, route, SECONDS, redis);
						table.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %,d | %,d | %.2f | %.2f | %d |%n",
								route, round, result.perSecond(), result.p50Micros(), result.p99Micros(),
								result.scriptsPerRequest(), result.commandsPerRequest(), result.failures()));
						assertThat(result.requests()).isPositive();
					}
				}
				System.out.println(table);
				Files.writeString(Path.of("target", "gateway-benchmark.md"), table);
			}
		}
	}

	private static Result phase(int port, String route, int seconds, RedisServer redis) throws Exception {
		long commandsBefore = totalCommands(redis);
		long scriptsBefore = scriptCalls(redis);
		long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
		AtomicLong failures = new AtomicLong();
		List<Future<long[]>> latencies = new ArrayList<>();
		long started = System.nanoTime();
		for (int c = 0; c < CLIENTS; c++) {
			int client = c;
			latencies.add(clients.submit(() -> {
				long[] took = new long[1 << 16];
				int count = 0;
				for (long i = client; System.nanoTime() < deadline; i += CLIENTS) {
					HttpRequest request = HttpRequest
						.newBuilder(URI.create("http://127.0.0.1:" + port + "/bench/" + route + "/x"))
						.timeout(Duration.ofSeconds(10))
						.header("X-Client", "bench-" + (i % IDENTITIES))
						.build();
					long start = System.nanoTime();
					int status;
					try {
						status = GatewayTestApplication.HTTP.send(request, HttpResponse.BodyHandlers.discarding())
							.statusCode();
					}
					catch (IOException ex) {
						status = -1;
					}
					long elapsed = System.nanoTime() - start;
					if (status != 200) {
						failures.incrementAndGet();
					}
					if (count == took.length) {
						took = Arrays.copyOf(took, count * 2);
					}
					took[count++] = elapsed;
				}
				return Arrays.copyOf(took, count);
			}));
		}
		List<long[]> all = new ArrayList<>();
		for (Future<long[]> future : latencies) {
			all.add(future.get());
		}
		long elapsedNanos = System.nanoTime() - started;
		clients.shutdown();
		long[] merged = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
		long scripts = scriptCalls(redis) - scriptsBefore;
		long commands = totalCommands(redis) - commandsBefore - 2; // the two INFOs that read the counters
		double requests = Math.max(1, merged.length);
		return new Result(merged.length, merged.length * 1e9 / elapsedNanos, percentile(merged, 0.50) / 1000,
				percentile(merged, 0.99) / 1000, scripts / requests, commands / requests, failures.get());
	}

	private static long percentile(long[] sorted, double quantile) {
		return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1)];
	}

	private static long totalCommands(RedisServer redis) {
		return redis.commands().info("stats").lines()
			.filter((line) -> line.startsWith("total_commands_processed:"))
			.mapToLong((line) -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
			.findFirst()
			.orElseThrow();
	}

	/** Script calls sent by clients (EVAL, EVALSHA): the round trips of the limiters. */
	private static long scriptCalls(RedisServer redis) {
		return redis.commands().info("commandstats").lines()
			.filter((line) -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
			.mapToLong((line) -> Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1")))
			.sum();
	}

	private record Result(long requests, double perSecond, long p50Micros, long p99Micros,
			double scriptsPerRequest, double commandsPerRequest, long failures) {
	}

}
