package io.github.ratelimit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;

/**
 * One {@code redis-server} process with its own temporary directory and log file. This is the
 * process handling shared by standalone servers, cluster nodes, replicas and sentinels.
 *
 * <p>Besides starting and stopping, a node can be broken on purpose: {@link #kill()} (SIGKILL,
 * directory kept), {@link #freeze()} / {@link #thaw()} (SIGSTOP / SIGCONT) and {@link #restart()}
 * (a new process with the same command line on the same port and directory). Only
 * {@link #stop()} is final.
 */
final class RedisNode {

	private static final int MAX_START_ATTEMPTS = 4;

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

	private static final long READY_POLL_MILLIS = 10;

	private static final int LOG_TAIL_LINES = 30;

	/** How long a restart keeps trying to bind the same port, e.g. while it is in TIME_WAIT. */
	private static final Duration RESTART_TIMEOUT = Duration.ofSeconds(10);

	private static final long RESTART_RETRY_MILLIS = 100;

	private final String name;

	private final HostAndPort address;

	private final Path directory;

	private final Path logFile;

	private final List<String> commandLine;

	/** The current process; replaced by {@link #restart()}. Written under the node's lock. */
	private volatile Process process;

	private boolean stopped;

	/** Volatile so that the shutdown hook can read it without taking the node's lock. */
	private volatile boolean frozen;

	private @Nullable RedisClient client;

	private @Nullable StatefulRedisConnection<String, String> connection;

	/** The process the admin connection was opened to, so a restart renews the connection. */
	private @Nullable Process connectionProcess;

	private RedisNode(String name, int port, Path directory, Path logFile, List<String> commandLine,
			Process process) {
		this.name = name;
		this.address = new HostAndPort(Ports.LOOPBACK_HOST, port);
		this.directory = directory;
		this.logFile = logFile;
		this.commandLine = List.copyOf(commandLine);
		this.process = process;
	}

	/**
	 * Starts a node and waits until it answers commands. Retries on another port if the process
	 * exits or does not answer in time.
	 * @param name a short name for directories and messages, e.g. {@code cluster-node-1}
	 * @param portPicker picks a free port for each attempt
	 * @param command produces the arguments for each attempt
	 * @return the running node
	 * @throws IllegalStateException if every attempt failed; the message contains each attempt's
	 * log tail
	 */
	static RedisNode start(String name, IntSupplier portPicker, NodeCommand command) {
		Path executable = RedisBinary.get().executable();
		List<String> failures = new ArrayList<>();
		for (int attempt = 1; attempt <= MAX_START_ATTEMPTS; attempt++) {
			RedisNode node = launch(name, executable, portPicker.getAsInt(), command);
			String failure = node.awaitReady(node.process);
			if (failure == null) {
				return node;
			}
			failures.add("attempt " + attempt + " on port " + node.port() + ": " + failure + "\n--- log tail ---\n"
					+ node.logTail());
			node.stop();
		}
		throw new IllegalStateException("Could not start redis-server '" + name + "' (" + executable + ") after "
				+ MAX_START_ATTEMPTS + " attempts:\n" + String.join("\n", failures));
	}

	private static RedisNode launch(String name, Path executable, int port, NodeCommand command) {
		Path directory = null;
		try {
			directory = Files.createTempDirectory("ratelimit-redis-" + name + "-");
			Path logFile = directory.resolve("redis.log");
			List<String> commandLine = new ArrayList<>();
			commandLine.add(executable.toString());
			commandLine.addAll(command.arguments(port, directory));
			Process process = new ProcessBuilder(commandLine).directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(logFile.toFile())
				.start();
			RedisNode node = new RedisNode(name, port, directory, logFile, commandLine, process);
			ProcessReaper.register(node);
			return node;
		}
		catch (IOException ex) {
			if (directory != null) {
				deleteRecursively(directory);
			}
			throw new UncheckedIOException("Could not launch redis-server '" + name + "' (" + executable + ")", ex);
		}
	}

	/** Returns {@code null} once the process answers, otherwise why it never will. */
	private @Nullable String awaitReady(Process candidate) {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (true) {
			if (!candidate.isAlive()) {
				return "process exited with code " + candidate.exitValue();
			}
			Long answeringPid = InfoProbe.processId(port());
			if (answeringPid != null) {
				return (answeringPid == candidate.pid()) ? null
						: "port is taken by another Redis process (pid " + answeringPid + ")";
			}
			if (System.nanoTime() - deadline >= 0) {
				return "no answer to INFO within " + STARTUP_TIMEOUT.toSeconds() + " s";
			}
			Await.pause(READY_POLL_MILLIS);
		}
	}

	String name() {
		return this.name;
	}

	HostAndPort address() {
		return this.address;
	}

	int port() {
		return this.address.port();
	}

	long pid() {
		return this.process.pid();
	}

	Path logFile() {
		return this.logFile;
	}

	synchronized boolean isRunning() {
		return !this.stopped && this.process.isAlive();
	}

	boolean isFrozen() {
		return this.frozen;
	}

	/**
	 * Returns the node's admin connection, opened on first use and closed when the node stops or is
	 * killed. After a {@link #restart()} a new connection is opened to the new process.
	 * @return a thread-safe connection
	 * @throws IllegalStateException if the node is stopped or its process is not running
	 */
	synchronized StatefulRedisConnection<String, String> connection() {
		if (this.stopped) {
			throw new IllegalStateException("redis-server '" + this.name + "' on " + this.address + " is stopped");
		}
		if (!this.process.isAlive()) {
			closeConnection(); // no endless reconnect attempts to a dead process
			throw new IllegalStateException(
					"redis-server '" + this.name + "' on " + this.address + " is not running (killed or crashed)");
		}
		if (this.connectionProcess != this.process) {
			closeConnection();
		}
		StatefulRedisConnection<String, String> result = this.connection;
		if (result == null) {
			RedisClient newClient = Lettuce.client(this.address);
			try {
				result = newClient.connect();
			}
			catch (RuntimeException ex) {
				Lettuce.shutdown(newClient);
				throw ex;
			}
			this.client = newClient;
			this.connection = result;
			this.connectionProcess = this.process;
		}
		return result;
	}

	RedisCommands<String, String> commands() {
		return connection().sync();
	}

	String logTail() {
		try {
			String log = new String(Files.readAllBytes(this.logFile), StandardCharsets.UTF_8);
			List<String> lines = log.lines().toList();
			return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
		}
		catch (IOException ex) {
			return "(log " + this.logFile + " unreadable: " + ex + ")";
		}
	}

	/**
	 * Kills the process with SIGKILL and waits until it has exited, so the port refuses
	 * connections. Keeps the directory for {@link #restart()} and closes the admin connection.
	 * Does nothing if the process is not running.
	 * @throws IllegalStateException if the node is stopped or the process does not exit in time
	 */
	synchronized void kill() {
		requireNotStopped("kill");
		closeConnection();
		this.frozen = false; // SIGKILL ends a stopped process too
		if (this.process.isAlive()) {
			destroyForcibly();
			if (!awaitExit(STOP_TIMEOUT)) {
				throw new IllegalStateException(this + " did not exit within " + STOP_TIMEOUT.toSeconds()
						+ " s after SIGKILL");
			}
		}
	}

	/**
	 * Stops the process with SIGSTOP: it keeps its listening socket (connects still succeed through
	 * the kernel backlog) but answers nothing until {@link #thaw()}. Idempotent.
	 * @throws IllegalStateException if the node is stopped or its process is not running
	 */
	synchronized void freeze() {
		requireNotStopped("freeze");
		if (this.frozen) {
			return;
		}
		if (!this.process.isAlive()) {
			throw new IllegalStateException("Cannot freeze " + this + ": the process is not running");
		}
		Signals.stop(this.process.pid());
		this.frozen = true;
	}

	/**
	 * Resumes a frozen process with SIGCONT. Does nothing if the node is not frozen.
	 */
	synchronized void thaw() {
		if (!this.frozen) {
			return;
		}
		if (this.process.isAlive()) {
			Signals.resume(this.process.pid());
		}
		this.frozen = false;
	}

	/**
	 * Starts a new process with the same command line on the same port and in the same directory,
	 * after killing the current one if it still runs, and waits until it answers commands. Binding
	 * is retried for a few seconds in case the port is briefly unavailable.
	 * @throws IllegalStateException if the node is stopped or the new process does not start
	 */
	synchronized void restart() {
		requireNotStopped("restart");
		kill();
		long deadline = System.nanoTime() + RESTART_TIMEOUT.toNanos();
		List<String> failures = new ArrayList<>();
		while (true) {
			Process candidate;
			try {
				candidate = new ProcessBuilder(this.commandLine).directory(this.directory.toFile())
					.redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(this.logFile.toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not restart " + this, ex);
			}
			this.process = candidate; // from now on stop(), kill() and the reaper act on the new process
			String failure = awaitReady(candidate);
			if (failure == null) {
				return;
			}
			failures.add(failure);
			destroyForcibly();
			awaitExit(STOP_TIMEOUT);
			if (failure.startsWith("port is taken") || System.nanoTime() - deadline >= 0) {
				throw new IllegalStateException("Could not restart redis-server '" + this.name + "' on "
						+ this.address + ": " + String.join("; ", failures) + "\n--- log tail ---\n" + logTail());
			}
			Await.pause(RESTART_RETRY_MILLIS);
		}
	}

	private void requireNotStopped(String action) {
		if (this.stopped) {
			throw new IllegalStateException(
					"Cannot " + action + " redis-server '" + this.name + "' on " + this.address + ": it is stopped");
		}
	}

	/** Stops the node: SIGTERM, bounded wait, then SIGKILL. Idempotent. */
	void stop() {
		stopAll(List.of(this));
	}

	/**
	 * Stops nodes concurrently: signals all of them first, then waits for each.
	 * @param nodes the nodes to stop
	 */
	static void stopAll(Collection<RedisNode> nodes) {
		nodes.forEach(RedisNode::beginStop);
		nodes.forEach(RedisNode::finishStop);
	}

	private void beginStop() {
		synchronized (this) {
			if (this.stopped) {
				return;
			}
			this.stopped = true;
			closeConnection();
			// A stopped (SIGSTOP) process would not act on SIGTERM before SIGCONT.
			thawQuietly();
		}
		this.process.destroy();
	}

	private void finishStop() {
		if (!awaitExit(STOP_TIMEOUT)) {
			destroyForcibly();
			awaitExit(STOP_TIMEOUT);
		}
		deleteRecursively(this.directory);
		ProcessReaper.unregister(this);
	}

	/** Kills the process at once, for the JVM shutdown hook. Touches no client library. */
	void reap() {
		// No lock: a test thread may hold it. SIGCONT first, although SIGKILL ends a stopped process.
		if (this.frozen) {
			try {
				Signals.resume(this.process.pid());
			}
			catch (RuntimeException ex) {
				// SIGKILL follows anyway.
			}
		}
		destroyForcibly();
		awaitExit(Duration.ofSeconds(2));
		deleteRecursively(this.directory);
	}

	private void thawQuietly() {
		if (this.frozen) {
			try {
				thaw();
			}
			catch (RuntimeException ex) {
				// SIGKILL after the stop timeout ends a process that stays stopped anyway.
			}
			this.frozen = false;
		}
	}

	private void closeConnection() {
		StatefulRedisConnection<String, String> openConnection = this.connection;
		RedisClient openClient = this.client;
		this.connection = null;
		this.client = null;
		this.connectionProcess = null;
		if (openConnection != null) {
			openConnection.close();
		}
		if (openClient != null) {
			Lettuce.shutdown(openClient);
		}
	}

	private void destroyForcibly() {
		Process current = this.process;
		current.descendants().forEach(ProcessHandle::destroyForcibly);
		current.destroyForcibly();
	}

	private boolean awaitExit(Duration timeout) {
		try {
			return this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			destroyForcibly();
			return false;
		}
	}

	private static void deleteRecursively(Path root) {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException | UncheckedIOException ex) {
			// Best effort: a leftover temp directory must not fail a test.
		}
	}

	@Override
	public String toString() {
		return "redis-server '" + this.name + "' on " + this.address + " (pid " + pid() + ")";
	}

}
