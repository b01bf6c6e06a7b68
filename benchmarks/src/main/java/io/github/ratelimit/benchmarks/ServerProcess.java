package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP application in a JVM of its own on a free loopback port, for the http-compare section: every contender
 * (ours on Spring Boot 4, an earlier build of ours, the bucket4j starter on Spring Boot 3) starts the same way, with
 * the same JVM options and no JIT warmth carried over from another. Its output goes to a log file, whose end is shown
 * when it does not start.
 */
final class ServerProcess implements AutoCloseable {

	/** The heap of every contender's JVM: the same for all. */
	static final String HEAP = "-Xmx512m";

	private final Process process;

	private final Path log;

	private final URI endpoint;

	private ServerProcess(Process process, Path log, URI endpoint) {
		this.process = process;
		this.log = log;
		this.endpoint = endpoint;
	}

	/**
	 * The java command of an application inside a Spring Boot fat jar whose main class is not the jar's own.
	 * @param jar the fat jar
	 * @param mainClass the application's main class
	 * @return the command, to which the application's arguments are appended
	 */
	static List<String> launcher(Path jar, String mainClass) {
		return new ArrayList<>(List.of(java(), HEAP, "-cp", jar.toString(), "-Dloader.main=" + mainClass,
				"org.springframework.boot.loader.launch.PropertiesLauncher"));
	}

	/** The java command of a fat jar's own main class. */
	static List<String> jar(Path jar) {
		return new ArrayList<>(List.of(java(), HEAP, "-jar", jar.toString()));
	}

	private static String java() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	/**
	 * Starts an application and waits until {@code path} answers (any status), at most two minutes.
	 * @param command the command, without the port
	 * @param path the path answered once the application is up
	 * @return the running application
	 */
	static ServerProcess start(List<String> command, String path) throws IOException, InterruptedException {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		List<String> full = new ArrayList<>(command);
		full.addAll(List.of("--server.port=" + port, "--server.address=127.0.0.1", "--logging.level.root=WARN",
				"--spring.main.banner-mode=off"));
		Path log = Files.createTempFile("http-compare-", ".log");
		Process process = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		ServerProcess server = new ServerProcess(process, log, URI.create("http://127.0.0.1:" + port + path));
		server.awaitUp();
		return server;
	}

	private void awaitUp() throws IOException, InterruptedException {
		HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("The application exited (" + this.process.exitValue() + "):\n" + tail());
			}
			try {
				client.send(HttpRequest.newBuilder(this.endpoint).timeout(Duration.ofSeconds(5)).build(),
						HttpResponse.BodyHandlers.discarding());
				return;
			}
			catch (IOException ex) {
				Thread.sleep(200); // not listening yet
			}
		}
		close();
		throw new IllegalStateException("The application did not answer within two minutes:\n" + tail());
	}

	/** The CPU time the application's process has used so far (all its threads: the JIT and the GC included). */
	Duration cpu() {
		return this.process.toHandle().info().totalCpuDuration().orElseThrow(
				() -> new IllegalStateException("This platform does not report a process's CPU time"));
	}

	/** The address of the endpoint waited for. */
	URI endpoint() {
		return this.endpoint;
	}

	/** The same application's address of another path. */
	URI endpoint(String path) {
		return this.endpoint.resolve(path);
	}

	private String tail() throws IOException {
		List<String> lines = Files.readAllLines(this.log);
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
	}

	@Override
	public void close() throws IOException, InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor();
		}
		Files.deleteIfExists(this.log);
	}

}
