package io.github.ratelimit.testkit;

import java.util.List;

import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A real standalone {@code redis-server} process on a free loopback port, without persistence.
 *
 * <p>Typical use in a test class:
 * <pre>{@code
 * static RedisServer redis = RedisServer.start();
 * // ... spring.data.redis.url = redis.uri()
 * @AfterAll static void stop() { redis.close(); }
 * }</pre>
 * For a server shared by all test classes of the JVM use {@link RedisServers#standalone()}.
 * Processes that are not closed are killed when the JVM exits.
 *
 * <p>Faults for resilience tests (start a server of your own for these, not the shared one):
 * <pre>{@code
 * redis.kill();     // SIGKILL: connections reset, the port refuses connects
 * redis.restart();  // a new, empty process on the same port
 * redis.freeze();   // SIGSTOP: connects succeed, nothing is answered
 * redis.thaw();     // SIGCONT: pending commands are answered
 * }</pre>
 * For network faults (latency, no answers, resets, refused connects) put a {@link TcpProxy} in
 * front of the server.
 */
public final class RedisServer implements AutoCloseable {

	private final RedisNode node;

	private RedisServer(RedisNode node) {
		this.node = node;
	}

	/**
	 * Starts a server on a free port and waits until it answers commands.
	 * @return the running server
	 * @throws IllegalStateException if no {@code redis-server} is available or it does not start
	 */
	public static RedisServer start() {
		return start(List.of());
	}

	/**
	 * Starts a server with additional {@code redis-server} arguments, for example
	 * {@code List.of("--maxmemory", "10mb")}.
	 * @param extraArguments arguments appended to the defaults
	 * @return the running server
	 * @throws IllegalStateException if no {@code redis-server} is available or it does not start
	 */
	public static RedisServer start(List<String> extraArguments) {
		return new RedisServer(RedisNode.start("standalone", Ports::freePort, NodeCommand.dataNode(extraArguments)));
	}

	/**
	 * Returns the host the server listens on.
	 * @return {@code 127.0.0.1}
	 */
	public String host() {
		return this.node.address().host();
	}

	/**
	 * Returns the port the server listens on.
	 * @return the port
	 */
	public int port() {
		return this.node.port();
	}

	/**
	 * Returns the server's address.
	 * @return host and port
	 */
	public HostAndPort address() {
		return this.node.address();
	}

	/**
	 * Returns the server's URI.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String uri() {
		return this.node.address().uri();
	}

	/**
	 * Returns the operating system process id of the server; a {@link #restart()} changes it.
	 * @return the pid of the current process
	 */
	public long pid() {
		return this.node.pid();
	}

	/**
	 * Returns a connection owned by this harness, for assertions and fixtures. It is opened on first
	 * use, is thread-safe, and is closed by {@link #close()}; do not close it yourself. {@link #kill()}
	 * closes it too and the first call after {@link #restart()} opens a new one, so fetch it again
	 * rather than keeping it across a restart. While the server is frozen its commands time out.
	 * @return the connection
	 * @throws IllegalStateException if the server is stopped or killed
	 */
	public StatefulRedisConnection<String, String> connection() {
		return this.node.connection();
	}

	/**
	 * Returns synchronous commands on {@link #connection()}, e.g.
	 * {@code redis.commands().pttl("key")}.
	 * @return the commands
	 */
	public RedisCommands<String, String> commands() {
		return this.node.commands();
	}

	/** Deletes all keys of all databases. */
	public void flushAll() {
		commands().flushall();
	}

	/**
	 * Returns whether the process is still running. A frozen process counts as running.
	 * @return {@code true} until stopped, killed (or crashed); again after {@link #restart()}
	 */
	public boolean isRunning() {
		return this.node.isRunning();
	}

	/**
	 * Returns whether the process is frozen by {@link #freeze()}.
	 * @return {@code true} between {@link #freeze()} and {@link #thaw()} (or a kill, restart or stop)
	 */
	public boolean isFrozen() {
		return this.node.isFrozen();
	}

	/**
	 * Kills the process with {@code SIGKILL}, like a crash, and waits until it has exited: open
	 * connections are reset and the port refuses connections. The directory is kept so that
	 * {@link #restart()} can bring the server back. Does nothing if the process is not running.
	 * @throws IllegalStateException if the server is stopped
	 */
	public void kill() {
		this.node.kill();
	}

	/**
	 * Suspends the process with {@code SIGSTOP}, like a hung host: the listening socket stays open,
	 * so connects still succeed, but nothing is answered until {@link #thaw()}. A frozen server is
	 * thawed before it is stopped, also when the JVM exits. Idempotent. Linux and macOS only (runs
	 * {@code kill -STOP}).
	 * @throws IllegalStateException if the server is stopped or not running
	 */
	public void freeze() {
		this.node.freeze();
	}

	/**
	 * Resumes a frozen process with {@code SIGCONT}; it then answers what it received meanwhile.
	 * Does nothing if the server is not frozen.
	 */
	public void thaw() {
		this.node.thaw();
	}

	/**
	 * Starts a new process on the same port with the same arguments, killing the current one first if
	 * it still runs, and waits until it answers commands. The data is gone: servers run without
	 * persistence. {@link #pid()} then returns the new pid.
	 * @throws IllegalStateException if the server is stopped or the new process does not start
	 */
	public void restart() {
		this.node.restart();
	}

	/**
	 * Returns the last lines of the server log, for diagnostics.
	 * @return the log tail
	 */
	public String logTail() {
		return this.node.logTail();
	}

	/**
	 * Stops the server, waits for the process to exit and deletes its directory. Idempotent.
	 */
	public void stop() {
		this.node.stop();
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	@Override
	public String toString() {
		return "RedisServer[" + uri() + ", pid " + pid() + "]";
	}

}
