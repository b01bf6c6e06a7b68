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
 * The backend's connection to Redis and its lifecycle. With a Lettuce factory, calls go through Lettuce's own
 * asynchronous commands on the factory's connection (its shared native connection, or a dedicated one held for the
 * backend's life when the factory shares none; the cluster connection on a Cluster), opened on first use; any other
 * factory is used through a {@link StringRedisTemplate}. Nothing is opened by the constructor.
 * <p>
 * The connection follows its factory: closed on {@link #stop()} (before the factory stops) and opened again on
 * {@link #start()}; a factory restarted outside the lifecycle, or a connection closed under a call, is noticed and
 * the connection forgotten, so that the next use opens a new one (architecture, "Factory restarts").
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

	/**
	 * Whether the connection is to a Cluster: from a Lettuce factory's configuration, otherwise learned on first use
	 * by opening a cluster connection.
	 */
	private volatile @Nullable Boolean cluster;

	/** Lettuce's asynchronous commands on the factory's connection, opened on first use. */
	private volatile @Nullable NativeConnection nativeConnection;

	/**
	 * The Lettuce client the native connection was opened with: a factory stopped and started again makes a new
	 * client and shuts the old one down, whose connections then fail every command at once.
	 */
	private volatile @Nullable Object nativeClientAtOpen;

	/**
	 * Lettuce's view of the Cluster's topology (which master serves which slot), kept up to date by the client's
	 * topology refreshes, from the first cluster connection opened on; null off Cluster and until then.
	 */
	private volatile @Nullable Partitions partitions;

	/**
	 * Whether a call has gone through on the native connection. Spring Data Redis opens it on first use with a
	 * blocking connect; until one call has succeeded, non-blocking calls start on a bounded elastic thread so that an
	 * event loop never waits for a (re)connect, and nothing is batched.
	 */
	private volatile boolean connected;

	/** Whether the lifecycle has started the backend (calls work either way: they open a connection on demand). */
	private volatile boolean running;

	/** Whether the lifecycle has stopped the backend since it last started, so that a start reconnects. */
	private volatile boolean stopped;

	/**
	 * Guards the lifecycle flags. Distinct from the monitor that opening the connection holds: a connect to a Redis
	 * that accepts connections but answers nothing (frozen, hung) holds that one for the client's timeout, and the
	 * context's start and stop must not wait for it.
	 */
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

	/**
	 * Whether the connection is to a Redis Cluster. A Lettuce factory tells by its configuration; any other factory
	 * is asked once by opening a cluster connection: one it cannot open means no Cluster.
	 */
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

	/**
	 * The address of the master serving a key's hash slot in the client's view of the topology (Cluster, with
	 * Lettuce, once a connection has been opened); null otherwise.
	 */
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

	/**
	 * Marks the backend started. After a stop, the native connection is opened again, waiting for it at most two
	 * seconds; what takes longer goes on in the background (and a failure is left to the next call, which opens it
	 * off the caller's thread).
	 */
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
				// the context's start waits a moment for it, so that the first requests find the connection open;
				// a Redis that does not answer by then is left to the background (and to the failure modes)
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

	/**
	 * Marks the backend stopped: the native connection is closed and forgotten, so that no call is made on a
	 * connection of a stopped factory. A call made while stopped opens a new one.
	 */
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
	 * The native connection, opened on first use: a Spring Data Redis connection of the factory (a cluster
	 * connection on a Cluster, whose commands go to the node of their first key's slot), kept open so that a factory
	 * that shares no native connection lends it a dedicated one for the backend's life.
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
	 * Forgets a connection that was closed under a call (its factory was stopped and started again, as Spring does
	 * when it pauses a context or refreshes it), so that the next use opens a new one. Reconnects after a Redis
	 * outage need nothing of this: the client reconnects the same connection.
	 */
	void forget(NativeConnection connection) {
		synchronized (this) {
			if (this.nativeConnection == connection) {
				this.nativeConnection = null;
				this.connected = false;
			}
		}
	}

	/**
	 * Forgets the connection when its factory was stopped and started again since it was opened (outside the
	 * backend's own lifecycle, which closes it on stop), so that the call opens a new one, off the caller's thread,
	 * instead of failing on the old client.
	 */
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
