package io.github.ratelimit.testkit;

import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * JVM-wide shared Redis setups, started lazily on first use and reused by every test class in the
 * JVM, so the suite pays for starting a cluster once. They are stopped when the JVM exits; do not
 * close them in tests, and use {@code flushAll()} to isolate tests instead. Do not kill, freeze
 * or fail them over either: fault tests start a setup of their own. A shared setup that was
 * nevertheless stopped (or has a killed process) is started again on the next call. Thread-safe.
 */
public final class RedisServers {

	private static final Shared<RedisServer> STANDALONE = new Shared<>(RedisServer::start, RedisServer::isRunning,
			RedisServer::stop);

	private static final Shared<RedisClusterServer> CLUSTER = new Shared<>(RedisClusterServer::start,
			RedisClusterServer::isRunning, RedisClusterServer::stop);

	private static final Shared<RedisSentinelServer> SENTINEL = new Shared<>(RedisSentinelServer::start,
			RedisSentinelServer::isRunning, RedisSentinelServer::stop);

	private RedisServers() {
	}

	/**
	 * Returns the shared standalone server.
	 * @return the running server
	 */
	public static RedisServer standalone() {
		return STANDALONE.get();
	}

	/**
	 * Returns the shared cluster of three masters without replicas.
	 * @return the running cluster
	 */
	public static RedisClusterServer cluster() {
		return CLUSTER.get();
	}

	/**
	 * Returns the shared sentinel setup (master, replica, one sentinel).
	 * @return the running setup
	 */
	public static RedisSentinelServer sentinel() {
		return SENTINEL.get();
	}

	/** One lazily started instance; each kind has its own lock so kinds can start concurrently. */
	private static final class Shared<T> {

		private final Supplier<T> starter;

		private final Predicate<T> running;

		private final Consumer<T> stopper;

		private @Nullable T instance;

		Shared(Supplier<T> starter, Predicate<T> running, Consumer<T> stopper) {
			this.starter = starter;
			this.running = running;
			this.stopper = stopper;
		}

		synchronized T get() {
			T current = this.instance;
			if (current == null || !this.running.test(current)) {
				if (current != null) {
					this.stopper.accept(current); // clean up what is left of a crashed setup
				}
				current = this.starter.get();
				this.instance = current;
			}
			return current;
		}

	}

}
