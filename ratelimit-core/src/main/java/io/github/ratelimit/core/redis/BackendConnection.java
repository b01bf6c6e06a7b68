package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionCommands;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The backend's connection to Redis and its lifecycle: Lettuce's asynchronous commands on the factory's connection,
 * opened on first use (any other factory through a {@link StringRedisTemplate}), closed before the factory stops and
 * forgotten when the factory was restarted under it (architecture, "The connection", "Factory restarts").
 */
final class BackendConnection {

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	/** How long a start after a stop waits for the new connection before leaving it to the background. */
	private static final Duration RECONNECT_WAIT = Duration.ofSeconds(2);

	/** Spring's translation of Lettuce's exceptions, as the template would throw them. */
	private static final LettuceExceptionConverter EXCEPTIONS = new LettuceExceptionConverter();

	private final RedisConnectionFactory factory;

	private final StringRedisTemplate template;

	private final @Nullable LettuceConnectionFactory lettuce;

	/** Whether the connection is to a Cluster; null until a non-Lettuce factory has been asked. */
	private volatile @Nullable Boolean cluster;

	/** Lettuce's asynchronous commands on the factory's connection, opened on first use. */
	private volatile @Nullable NativeConnection nativeConnection;

	/**
	 * The Lettuce client the native connection was opened with: a factory stopped and started again makes a new
	 * client and shuts the old one down, whose connections then fail every command at once.
	 */
	private volatile @Nullable Object nativeClientAtOpen;

	/** Lettuce's live view of which master serves which slot; null off Cluster and before the first connection. */
	private volatile @Nullable Partitions partitions;

	/**
	 * Whether a call has gone through on the native connection. Until then (Spring Data Redis connects blocking),
	 * non-blocking calls start on a bounded elastic thread and nothing is batched.
	 */
	private volatile boolean connected;

	/** Whether the lifecycle has started the backend (calls work either way: they open a connection on demand). */
	private volatile boolean running;

	/** Whether the lifecycle has stopped the backend since it last started, so that a start reconnects. */
	private volatile boolean stopped;

	/** Not the monitor a connect holds: a connect to a frozen Redis holds that one for the client's timeout. */
	private final Object lifecycleLock = new Object();

	BackendConnection(RedisConnectionFactory factory) {
		this.factory = factory;
		this.template = new StringRedisTemplate(factory);
		this.lettuce = (factory instanceof LettuceConnectionFactory lettuceFactory) ? lettuceFactory : null;
		this.cluster = (this.lettuce != null) ? this.lettuce.isClusterAware() : null;
	}

	RedisConnectionFactory factory() {
		return this.factory;
	}

	/** The template, for a factory other than Lettuce's and for key commands. */
	StringRedisTemplate template() {
		return this.template;
	}

	/** Whether calls go through Lettuce's native commands (else through the template). */
	boolean isLettuce() {
		return this.lettuce != null;
	}

	/**
	 * Opens the connection and pings Redis through it, blocking the calling thread.
	 * @throws RuntimeException when Redis cannot be reached
	 */
	void open() {
		if (this.lettuce != null) {
			await(nativeConnection().commands().ping());
			this.connected = true;
		}
		else {
			this.template.execute((RedisCallback<String>) RedisConnectionCommands::ping);
		}
	}

	/** Whether the connection is to a Cluster; a non-Lettuce factory is asked once, by opening a cluster connection. */
	boolean isCluster() {
		Boolean known = this.cluster;
		if (known == null) {
			known = opensClusterConnection(this.factory);
			this.cluster = known;
		}
		return known;
	}

	/** Whether {@link #isCluster()} answers without opening a connection. */
	boolean knowsTopology() {
		return this.cluster != null;
	}

	/** Whether the connection is known not to be a Cluster's, without opening one. */
	boolean knownStandalone() {
		return Boolean.FALSE.equals(this.cluster);
	}

	private static boolean opensClusterConnection(RedisConnectionFactory factory) {
		try {
			factory.getClusterConnection().close();
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** The address of the master serving a key's slot (Cluster, Lettuce, once connected); null otherwise. */
	@Nullable String master(String key) {
		Partitions topology = this.partitions;
		if (topology == null) {
			return null;
		}
		RedisClusterNode master = topology.getPartitionBySlot(ClusterSlotHashUtil.calculateSlot(key));
		return (master != null) ? address(master) : null;
	}

	/** The addresses of the masters that serve slots in the client's view of the topology (empty off Cluster). */
	Set<String> masters() {
		Partitions topology = this.partitions;
		Set<String> masters = new HashSet<>();
		if (topology != null) {
			for (RedisClusterNode node : topology) {
				if (!node.hasNoSlots()) {
					masters.add(address(node));
				}
			}
		}
		return masters;
	}

	private static String address(RedisClusterNode node) {
		String host = node.getUri().getHost();
		return (host.contains(":") ? "[" + host + "]" : host) + ":" + node.getUri().getPort();
	}

	/** Marks the backend started; after a stop, reopens the connection, waiting at most {@link #RECONNECT_WAIT}. */
	void start() {
		boolean reconnect;
		synchronized (this.lifecycleLock) {
			reconnect = this.stopped && this.lettuce != null;
			this.stopped = false;
			this.running = true;
		}
		if (reconnect) {
			CompletableFuture<Void> reconnected = CompletableFuture.runAsync(this::open,
					(task) -> Schedulers.boundedElastic().schedule(task));
			try {
				// so that the first requests find it open; a Redis silent by then is left to the failure modes
				reconnected.get(RECONNECT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (TimeoutException | ExecutionException ex) {
				logger.debug("Could not reconnect to Redis at once after a restart; the next call will", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Marks the backend stopped and closes the native connection; a call made while stopped opens a new one. */
	void stop() {
		synchronized (this.lifecycleLock) {
			this.running = false;
			this.stopped = true;
		}
		// not under the connection's monitor, which a connect in progress may hold for the client's timeout; a
		// connection such a connect completes after this is dropped by forgetIfRestarted once the factory restarts
		NativeConnection connection = this.nativeConnection;
		this.nativeConnection = null;
		this.connected = false;
		if (connection != null) {
			try {
				connection.holder().close();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the rate limiter's Redis connection", ex);
			}
		}
	}

	boolean isRunning() {
		return this.running;
	}

	/** Whether a call has gone through on the native connection since it was opened. */
	boolean isConnected() {
		return this.connected;
	}

	/** Records that a call went through: later calls may batch, and non-blocking ones need not start elsewhere. */
	void connected() {
		this.connected = true;
	}

	/**
	 * The native connection, opened on first use and kept open (so a factory that shares none lends a dedicated one);
	 * on a Cluster, commands go to the node of their first key's slot.
	 */
	@SuppressWarnings("unchecked")
	NativeConnection nativeConnection() {
		NativeConnection connection = this.nativeConnection;
		if (connection == null) {
			synchronized (this) {
				connection = this.nativeConnection;
				if (connection == null) {
					LettuceConnectionFactory lettuceFactory = Objects.requireNonNull(this.lettuce);
					this.nativeClientAtOpen = nativeClient();
					RedisConnection holder = lettuceFactory.isClusterAware() ? lettuceFactory.getClusterConnection()
							: lettuceFactory.getConnection();
					connection = new NativeConnection(holder,
							(RedisClusterAsyncCommands<byte[], byte[]>) ((LettuceConnection) holder).getNativeConnection());
					if (connection.commands() instanceof RedisAdvancedClusterAsyncCommands<?, ?> clusterCommands) {
						this.partitions = clusterCommands.getStatefulConnection().getPartitions();
					}
					this.nativeConnection = connection;
				}
			}
		}
		return connection;
	}

	/**
	 * Forgets a connection closed under a call (its factory restarted), so the next use opens a new one. A Redis
	 * outage needs nothing of this: the client reconnects the same connection.
	 */
	void forget(NativeConnection connection) {
		synchronized (this) {
			if (this.nativeConnection == connection) {
				this.nativeConnection = null;
				this.connected = false;
			}
		}
	}

	/** Forgets the connection if its factory restarted outside the lifecycle, rather than fail on the old client. */
	void forgetIfRestarted() {
		NativeConnection connection = this.nativeConnection;
		if (connection != null && nativeClient() != this.nativeClientAtOpen) {
			forget(connection);
		}
	}

	private @Nullable Object nativeClient() {
		try {
			return (this.lettuce != null) ? this.lettuce.getNativeClient() : null;
		}
		catch (IllegalStateException ex) {
			// stopped: the call fails on its own
			return this.nativeClientAtOpen;
		}
	}

	/** Waits for a Lettuce command as the template would: up to the factory's timeout, with Spring's exceptions. */
	<T> T await(CompletionStage<T> command) {
		long timeoutMillis = (this.lettuce != null) ? this.lettuce.getTimeout() : 60_000;
		CompletableFuture<T> future = command.toCompletableFuture();
		try {
			return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			future.cancel(true);
			throw translate(new RedisCommandInterruptedException(ex));
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw translate(new RedisCommandTimeoutException("Command timed out after " + timeoutMillis + " ms"));
		}
		catch (ExecutionException ex) {
			throw translate((ex.getCause() != null) ? ex.getCause() : ex);
		}
	}

	/** Lettuce's exceptions as Spring's, the ones the template throws. */
	static RuntimeException translate(Throwable error) {
		Throwable cause = (error instanceof CompletionException && error.getCause() != null) ? error.getCause() : error;
		if (cause instanceof RuntimeException runtime) {
			RuntimeException translated = EXCEPTIONS.translateExceptionIfPossible(runtime);
			return (translated != null) ? translated : runtime;
		}
		return new IllegalStateException(cause);
	}

	/** The connection that holds the native one open, and Lettuce's asynchronous commands on it. */
	record NativeConnection(RedisConnection holder, RedisClusterAsyncCommands<byte[], byte[]> commands) {
	}

}
