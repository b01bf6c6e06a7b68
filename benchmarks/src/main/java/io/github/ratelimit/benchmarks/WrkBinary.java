package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds the HTTP load tool {@code wrk}: the command given with {@code -Dbench.wrk} or {@code RATELIMIT_WRK}, else
 * {@code wrk} on the {@code PATH}, else the launcher a previous run unpacked into {@code .wrk/}, else it fetches the
 * distribution's package with {@code .ci/fetch-wrk} (no root needed; {@code -Dbench.wrk.fetch=false} turns that off).
 * Paths are relative to the working directory, the repository's root when run as {@code benchmarks/README.md} shows.
 *
 * @param command the command that runs wrk, or {@code null} when none was found
 * @param version the first line of {@code wrk -v}, or why wrk is not available
 * @param origin where the command came from
 */
record WrkBinary(String command, String version, String origin) {

	static final Path UNPACKED = Path.of(".wrk");

	/** Whether a runnable wrk was found. */
	boolean available() {
		return this.command != null;
	}

	static WrkBinary find() {
		List<String> tried = new ArrayList<>();
		String given = System.getProperty("bench.wrk", System.getenv("RATELIMIT_WRK"));
		if (given != null) {
			return check(given, "-Dbench.wrk / RATELIMIT_WRK", tried);
		}
		WrkBinary onPath = check("wrk", "the PATH", tried);
		if (onPath.available()) {
			return onPath;
		}
		Path unpacked = UNPACKED.resolve("wrk");
		if (Files.isExecutable(unpacked)) {
			WrkBinary previous = check(unpacked.toString(), "unpacked by .ci/fetch-wrk", tried);
			if (previous.available()) {
				return previous;
			}
		}
		Path fetch = Path.of(".ci", "fetch-wrk");
		if (!Boolean.parseBoolean(System.getProperty("bench.wrk.fetch", "true"))) {
			tried.add("fetching is off (-Dbench.wrk.fetch=false)");
		}
		else if (!Files.isRegularFile(fetch)) {
			tried.add("no " + fetch + " under the working directory to fetch it with");
		}
		else {
			System.out.println("http-wrk: fetching wrk with " + fetch);
			String launcher = fetch(fetch, tried);
			if (launcher != null) {
				return check(launcher, "the distribution's package, unpacked by .ci/fetch-wrk", tried);
			}
		}
		return new WrkBinary(null, String.join("; ", tried), "none");
	}

	private static WrkBinary check(String command, String origin, List<String> tried) {
		String version = version(command);
		if (version == null) {
			tried.add(command + " (" + origin + ") does not run");
			return new WrkBinary(null, String.join("; ", tried), origin);
		}
		return new WrkBinary(command, version, origin);
	}

	/** The first line of {@code wrk -v} without the copyright, or {@code null} if the command is not a wrk. */
	private static String version(String command) {
		try {
			Process process = new ProcessBuilder(command, "-v").redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return null;
			}
			String first = output.lines().findFirst().orElse("");
			int copyright = first.indexOf(" Copyright");
			return first.startsWith("wrk") ? ((copyright > 0) ? first.substring(0, copyright) : first).trim() : null;
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/** Runs the fetch script into {@link #UNPACKED}; its progress goes to stderr, the launcher's path is returned. */
	private static String fetch(Path script, List<String> tried) {
		try {
			Process process = new ProcessBuilder("bash", script.toString(), UNPACKED.toString())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(6, TimeUnit.MINUTES)) {
				process.destroyForcibly();
				tried.add(script + " did not finish in 6 minutes");
				return null;
			}
			if (process.exitValue() != 0) {
				tried.add(script + " failed (exit " + process.exitValue() + ", reason above)");
				return null;
			}
			return output.lines().reduce((first, second) -> second).orElse(null);
		}
		catch (IOException ex) {
			tried.add(script + " could not be run: " + ex.getMessage());
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			tried.add(script + " was interrupted");
			return null;
		}
	}

}
