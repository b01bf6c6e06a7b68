package io.github.ratelimit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Sends {@code SIGSTOP} and {@code SIGCONT}, which the JDK cannot, by running {@code kill}. Where
 * {@code /proc} exists (Linux) it also waits until the kernel reports the process stopped or
 * running again, so a caller can rely on the new state as soon as a method returns.
 */
final class Signals {

	private static final Duration KILL_COMMAND_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration STATE_TIMEOUT = Duration.ofSeconds(5);

	private Signals() {
	}

	/**
	 * Stops a process with {@code SIGSTOP} and waits until it is stopped.
	 * @param pid the process id
	 * @throws IllegalStateException if {@code kill} fails or the process does not stop in time
	 */
	static void stop(long pid) {
		send("-STOP", pid);
		Await.until("process " + pid + " to stop", STATE_TIMEOUT,
				() -> {
					char state = state(pid);
					// Also done when the process is gone (zombie, dead) or the state is unknown (no /proc).
					return (state == 'T' || state == 'Z' || state == 'X' || state == '?') ? null : "state " + state;
				});
	}

	/**
	 * Resumes a stopped process with {@code SIGCONT} and waits until it is no longer stopped.
	 * @param pid the process id
	 * @throws IllegalStateException if {@code kill} fails or the process stays stopped
	 */
	static void resume(long pid) {
		send("-CONT", pid);
		Await.until("process " + pid + " to resume", STATE_TIMEOUT,
				() -> (state(pid) != 'T') ? null : "still stopped");
	}

	private static void send(String signal, long pid) {
		String command = "kill " + signal + " " + pid;
		try {
			Process kill = new ProcessBuilder("kill", signal, String.valueOf(pid)).redirectErrorStream(true).start();
			kill.getOutputStream().close();
			if (!kill.waitFor(KILL_COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				kill.destroyForcibly();
				throw new IllegalStateException("'" + command + "' did not finish within "
						+ KILL_COMMAND_TIMEOUT.toSeconds() + " s");
			}
			if (kill.exitValue() != 0) {
				String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
				throw new IllegalStateException("'" + command + "' exited with " + kill.exitValue() + ": " + output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run '" + command + "'", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running '" + command + "'", ex);
		}
	}

	/**
	 * Returns the state letter of {@code /proc/<pid>/stat}: {@code T} when stopped by a signal.
	 * Without {@code /proc} (not Linux) returns {@code ?}, which callers treat as "done".
	 */
	private static char state(long pid) {
		Path stat = Paths.get("/proc", String.valueOf(pid), "stat");
		try {
			String content = Files.readString(stat, StandardCharsets.UTF_8);
			// "<pid> (<comm>) <state> ...": comm may contain spaces and parentheses.
			int end = content.lastIndexOf(')');
			return (end >= 0 && end + 2 < content.length()) ? content.charAt(end + 2) : '?';
		}
		catch (IOException ex) {
			return '?';
		}
	}

}
