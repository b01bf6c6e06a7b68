package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.testkit.Wait;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real {@code prometheus} process on a free loopback port, scraping one application every second and evaluating
 * one rules file every second, with its own storage under a directory of its own. The binary is the one named by
 * {@code RATELIMIT_PROMETHEUS} (an environment variable or a system property), as {@code .ci/fetch-prometheus}
 * prints it; {@code promtool} is taken from the same directory.
 */
final class PrometheusServer implements AutoCloseable {

	static final String BINARY = "RATELIMIT_PROMETHEUS";

	/** Why the Prometheus tests are skipped when no binary is given. */
	static final String NOT_GIVEN = "no Prometheus binary: set " + BINARY
			+ " to one (.ci/fetch-prometheus unpacks the Linux distribution's)";

	private static final Duration STARTUP = Duration.ofSeconds(60);

	private static final int ATTEMPTS = 3;

	private final Process process;

	private final int port;

	private final Path log;

	private final HttpClient client = HttpClient.newHttpClient();

	private final JsonMapper json = JsonMapper.builder().build();

	private PrometheusServer(Process process, int port, Path log) {
		this.process = process;
		this.port = port;
		this.log = log;
	}

	/** The prometheus binary named by {@code RATELIMIT_PROMETHEUS}, or null when none is. */
	static Path binary() {
		String named = System.getProperty(BINARY, System.getenv(BINARY));
		return (named == null || named.isBlank()) ? null : Path.of(named);
	}

	/** The promtool next to the prometheus binary. */
	static Path promtool(Path binary) {
		return binary.resolveSibling("promtool");
	}

	/**
	 * Starts Prometheus; a port taken by someone else between probe and bind costs an attempt, not the test.
	 * @param binary the prometheus binary
	 * @param dir a directory of its own: configuration, storage and log go there
	 * @param appPort the port of the application it scrapes at {@code /actuator/prometheus}
	 * @param rules the rules file it evaluates
	 * @return the running, ready server
	 */
	static PrometheusServer start(Path binary, Path dir, int appPort, Path rules) throws IOException {
		Files.createDirectories(dir);
		Path config = dir.resolve("prometheus.yml");
		Files.writeString(config, """
				global:
				  scrape_interval: 1s
				  evaluation_interval: 1s
				rule_files:
				  - '%s'
				scrape_configs:
				  - job_name: app
				    metrics_path: /actuator/prometheus
				    static_configs:
				      - targets: ['127.0.0.1:%d']
				""".formatted(rules.toAbsolutePath(), appPort));
		Path log = dir.resolve("prometheus.log");
		for (int attempt = 1;; attempt++) {
			int port = freePort();
			Process process = new ProcessBuilder(binary.toString(), "--config.file=" + config,
					"--storage.tsdb.path=" + dir.resolve("data-" + attempt),
					"--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
				.redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			PrometheusServer server = new PrometheusServer(process, port, log);
			if (server.awaitReady()) {
				return server;
			}
			server.close();
			if (attempt == ATTEMPTS) {
				throw new IllegalStateException("prometheus did not start: " + server.logTail());
			}
		}
	}

	/**
	 * An instant query through the HTTP API.
	 * @param promql the expression
	 * @return the result's series (a JSON array)
	 */
	JsonNode query(String promql) {
		JsonNode answer = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
		if (!"success".equals(answer.path("status").asString())) {
			throw new IllegalStateException("query failed: " + promql + ": " + answer);
		}
		return answer.path("data").path("result");
	}

	/** The names of the alerts that were pending or firing at any time since this server started. */
	Set<String> alertsEverActive() {
		Set<String> names = new TreeSet<>();
		for (JsonNode series : query("max_over_time(ALERTS[1h])")) {
			names.add(series.path("metric").path("alertname").asString());
		}
		return names;
	}

	/** When the rules were last evaluated, the earliest over the groups; null before the first evaluation. */
	Instant lastRuleEvaluation() {
		Instant earliest = null;
		for (JsonNode group : get("/api/v1/rules").path("data").path("groups")) {
			Instant evaluated = Instant.parse(group.path("lastEvaluation").asString());
			earliest = (earliest == null || evaluated.isBefore(earliest)) ? evaluated : earliest;
		}
		return (earliest == null || earliest.getEpochSecond() <= 0) ? null : earliest;
	}

	/** The last lines of its log, for a failure message. */
	String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor();
			}
		}
		catch (InterruptedException ex) {
			this.process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	private boolean awaitReady() {
		try {
			Wait.until("prometheus ready", STARTUP, () -> !this.process.isAlive() || ready());
		}
		catch (IllegalStateException ex) {
			return false;
		}
		return this.process.isAlive();
	}

	private boolean ready() {
		try {
			return this.client.send(request("/-/ready"), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private JsonNode get(String path) {
		try {
			return this.json.readTree(this.client.send(request(path), HttpResponse.BodyHandlers.ofString()).body());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private HttpRequest request(String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.GET()
			.build();
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
