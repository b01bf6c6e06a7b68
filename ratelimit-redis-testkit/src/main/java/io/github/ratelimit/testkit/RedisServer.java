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
	 * Returns the operating system process id of the server.
	 * @return the pid
	 */
	public long pid() {
		return this.node.pid();
	}

	/**
	 * Returns a connection owned by this harness, for assertions and fixtures. It is opened on first
	 * use, is thread-safe, and is closed by {@link #close()}; do not close it yourself.
	 * @return the connection
	 * @throws IllegalStateException if the server is stopped
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
	 * Returns whether the process is still running.
	 * @return {@code true} until stopped (or crashed)
	 */
	public boolean isRunning() {
		return this.node.isRunning();
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
