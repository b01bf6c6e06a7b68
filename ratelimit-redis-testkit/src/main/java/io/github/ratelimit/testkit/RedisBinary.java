package io.github.ratelimit.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Locates a {@code redis-server} executable (version 6.2 or newer) for the testkit.
 *
 * <p>Resolution order, first match wins:
 * <ol>
 * <li>the system property {@value #PROPERTY} or the environment variable {@value #ENVIRONMENT}
 * (the property wins if both are set); when set, it must point to a usable executable;</li>
 * <li>{@code redis-server} on the {@code PATH};</li>
 * <li>the binary shipped in {@code com.github.codemonstur:embedded-redis}, extracted once into
 * {@code java.io.tmpdir}.</li>
 * </ol>
 * Every candidate is verified by running {@code redis-server --version}. The result is resolved
 * once per JVM.
 */
public final class RedisBinary {

	/** System property naming the {@code redis-server} executable to use. */
	public static final String PROPERTY = "ratelimit.redis-server";

	/** Environment variable naming the {@code redis-server} executable to use. */
	public static final String ENVIRONMENT = "RATELIMIT_REDIS_SERVER";

	/** The oldest supported version: Redis 6.2. */
	public static final RedisVersion MINIMUM_VERSION = new RedisVersion(6, 2, 0);

	private static final long VERSION_TIMEOUT_SECONDS = 10;

	private static @Nullable RedisBinary resolved;

	private final Path executable;

	private final RedisVersion version;

	private final String origin;

	private RedisBinary(Path executable, RedisVersion version, String origin) {
		this.executable = executable;
		this.version = version;
		this.origin = origin;
	}

	/**
	 * Returns the {@code redis-server} to use, resolving it on first call.
	 * @return the verified executable
	 * @throws IllegalStateException if no usable executable was found; the message lists what was
	 * tried and how to fix it
	 */
	public static synchronized RedisBinary get() {
		RedisBinary result = resolved;
		if (result == null) {
			result = resolve();
			resolved = result;
		}
		return result;
	}

	/**
	 * Returns the path of the executable.
	 * @return the executable
	 */
	public Path executable() {
		return this.executable;
	}

	/**
	 * Returns the version reported by {@code redis-server --version}.
	 * @return the version
	 */
	public RedisVersion version() {
		return this.version;
	}

	/**
	 * Returns where the executable came from, for diagnostics, for example {@code PATH}.
	 * @return a short description of the source
	 */
	public String origin() {
		return this.origin;
	}

	@Override
	public String toString() {
		return "redis-server " + this.version + " at " + this.executable + " (from " + this.origin + ")";
	}

	private static RedisBinary resolve() {
		String configured = configuredLocation();
		if (configured != null) {
			return verify(Paths.get(configured), "-D" + PROPERTY + " / " + ENVIRONMENT)
				.orThrow("The redis-server configured via -D" + PROPERTY + " or " + ENVIRONMENT + " ('" + configured
						+ "') is not usable");
		}
		List<String> tried = new ArrayList<>();
		tried.add("1) -D" + PROPERTY + " / " + ENVIRONMENT + ": not set");
		Path onPath = findOnPath();
		if (onPath == null) {
			tried.add("2) PATH: no executable redis-server found");
		}
		else {
			Candidate candidate = verify(onPath, "PATH");
			if (candidate.binary != null) {
				return candidate.binary;
			}
			tried.add("2) PATH: " + candidate.problem);
		}
		Candidate embedded = extractEmbedded();
		if (embedded.binary != null) {
			return embedded.binary;
		}
		tried.add("3) embedded-redis jar: " + embedded.problem);
		throw new IllegalStateException("No usable redis-server (>= " + MINIMUM_VERSION + ") found. Tried:\n  "
				+ String.join("\n  ", tried) + "\nFix one of: set -D" + PROPERTY + "=/path/to/redis-server or the "
				+ ENVIRONMENT + " environment variable; install redis-server >= " + MINIMUM_VERSION
				+ " on the PATH; or use an OS/architecture for which com.github.codemonstur:embedded-redis ships a"
				+ " working binary (linux amd64/arm64/386, macOS amd64/arm64).");
	}

	private static @Nullable String configuredLocation() {
		String property = System.getProperty(PROPERTY);
		if (property != null && !property.isBlank()) {
			return property.trim();
		}
		String environment = System.getenv(ENVIRONMENT);
		return (environment != null && !environment.isBlank()) ? environment.trim() : null;
	}

	private static @Nullable Path findOnPath() {
		String path = System.getenv("PATH");
		if (path == null) {
			return null;
		}
		for (String directory : path.split(File.pathSeparator)) {
			if (directory.isEmpty()) {
				continue;
			}
			Path candidate = Paths.get(directory, "redis-server");
			if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
				return candidate;
			}
		}
		return null;
	}

	private static Candidate extractEmbedded() {
		String resource = EmbeddedBinaries.resourceFor(System.getProperty("os.name", ""),
				System.getProperty("os.arch", ""));
		if (resource == null) {
			return Candidate.problem("no binary for os.name=" + System.getProperty("os.name") + ", os.arch="
					+ System.getProperty("os.arch"));
		}
		try {
			return verify(EmbeddedBinaries.extract(resource), "embedded-redis resource " + resource);
		}
		catch (IOException | RuntimeException ex) {
			return Candidate.problem("extracting " + resource + " failed: " + ex);
		}
	}

	static Candidate verify(Path executable, String origin) {
		if (!Files.isRegularFile(executable) || !Files.isExecutable(executable)) {
			return Candidate.problem(executable + " is not an executable file");
		}
		String output;
		try {
			Process process = new ProcessBuilder(executable.toString(), "--version").redirectErrorStream(true).start();
			process.getOutputStream().close();
			if (!process.waitFor(VERSION_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return Candidate.problem(executable + " --version did not finish within " + VERSION_TIMEOUT_SECONDS + " s");
			}
			output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			if (process.exitValue() != 0) {
				return Candidate.problem(executable + " --version exited with " + process.exitValue() + ": " + output);
			}
		}
		catch (IOException ex) {
			return Candidate.problem(executable + " --version could not be run: " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return Candidate.problem("interrupted while running " + executable + " --version");
		}
		RedisVersion version = RedisVersion.parse(output);
		if (version == null) {
			return Candidate.problem(executable + " --version printed no version: " + output);
		}
		if (version.compareTo(MINIMUM_VERSION) < 0) {
			return Candidate.problem(executable + " is version " + version + ", need >= " + MINIMUM_VERSION);
		}
		return new Candidate(new RedisBinary(executable.toAbsolutePath(), version, origin), null);
	}

	/** Either a verified binary or the reason a candidate was rejected. */
	record Candidate(@Nullable RedisBinary binary, @Nullable String problem) {

		static Candidate problem(String problem) {
			return new Candidate(null, problem);
		}

		RedisBinary orThrow(String message) {
			if (this.binary == null) {
				throw new IllegalStateException(message + ": " + this.problem);
			}
			return this.binary;
		}

	}

}
