package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

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

	private static final LettuceExceptionConverter EXCEPTIONS = new LettuceExceptionConverter();

	private final RedisConnectionFactory factory;

	private final StringRedisTemplate template;

	private final @Nullable LettuceConnectionFactory lettuce;

	/** Whether the connection is to a Cluster; null until a non-Lettuce factory has been asked. */
	private volatile @Nullable Boolean cluster;

	private volatile @Nullable NativeConnection nativeConnection;

	/** The client the connection was opened with: a restarted factory has a new one and has shut this one down. */
	private volatile @Nullable Object nativeClientAtOpen;

	/** Lettuce's live view of which master serves which slot; null off Cluster and before the first connection. */
	private volatile @Nullable Partitions partitions;

	/** Whether a call went through; until then (the connect blocks) calls start on bounded elastic, unbatched. */
	private volatile boolean connected;

	private volatile boolean running;

	/** Whether the lifecycle stopped the backend since it last started, so that a start reconnects. */
	private volatile boolean stopped;

	/** Not the monitor a connect holds (for the client's timeout, when Redis is frozen): stop() must not wait on it. */
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

	StringRedisTemplate template() {
		return this.template;
	}

	boolean isLettuce() {
		return this.lettuce != null;
	}

	/** Opens the connection and pings Redis through it, blocking; throws when Redis cannot be reached. */
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
			try {
				this.factory.getClusterConnection().close();
				known = true;
			}
			catch (RuntimeException ex) {
				known = false;
			}
			this.cluster = known;
		}
		return known;
	}

	boolean knowsTopology() {
		return this.cluster != null;
	}

	/** Whether keys have masters to look up: a Cluster's topology, read by Lettuce once connected. */
	boolean sharded() {
		return this.partitions != null;
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

	/** The node id of the master serving a key's slot (Cluster, Lettuce, once connected); null otherwise. */
	@Nullable String masterId(String key) {
		Partitions topology = this.partitions;
		RedisClusterNode master = (topology != null)
				? topology.getPartitionBySlot(ClusterSlotHashUtil.calculateSlot(key)) : null;
		return (master != null) ? master.getNodeId() : null;
	}

	/** Whether the node is a master serving slots in the client's view of the topology. */
	boolean isMaster(String nodeId) {
		Partitions topology = this.partitions;
		RedisClusterNode node = (topology != null) ? topology.getPartitionByNodeId(nodeId) : null;
		return node != null && !node.hasNoSlots();
	}

	/**
	 * The commands of one Cluster node's own connection (Lettuce's, kept by the cluster connection): a command sent
	 * there is not redirected, so a MOVED or ASK comes back as its error. Fails, opening nothing on this thread (an
	 * event loop), when the cluster connection is not open.
	 */
	@SuppressWarnings("unchecked")
	CompletableFuture<NativeConnection> node(String nodeId) {
		NativeConnection connection = this.nativeConnection;
		if (connection == null) {
			return CompletableFuture.failedFuture(new IllegalStateException("The connection is not open"));
		}
		if (!(connection.commands() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster)) {
			return CompletableFuture.failedFuture(new IllegalStateException("Not a Cluster connection"));
		}
		try {
			return ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).getStatefulConnection()
				.getConnectionAsync(nodeId)
				.thenApply((node) -> new NativeConnection(connection.holder(), node.async()));
		}
		catch (RuntimeException ex) {
			// a node the topology no longer knows
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** The addresses of the masters that serve slots in the client's view of the topology (empty off Cluster). */
	Set<String> masters() {
		Partitions topology = this.partitions;
		return (topology == null) ? Set.of()
				: topology.stream()
					.filter((node) -> !node.hasNoSlots())
					.map(BackendConnection::address)
					.collect(Collectors.toSet());
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
			try {
				// so that the first requests find it open; a Redis silent by then is left to the failure modes
				CompletableFuture.runAsync(this::open, (task) -> Schedulers.boundedElastic().schedule(task))
					.orTimeout(RECONNECT_WAIT.toMillis(), TimeUnit.MILLISECONDS)
					.join();
			}
			catch (CompletionException ex) {
				logger.debug("Could not reconnect to Redis at once after a restart; the next call will", ex);
			}
		}
	}

	/** Marks the backend stopped and closes the native connection; a call made while stopped opens a new one. */
	void stop() {
		synchronized (this.lifecycleLock) {
			this.running = false;
			this.stopped = true;
		}
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

	boolean isConnected() {
		return this.connected;
	}

	void connected() {
		this.connected = true;
	}

	/** The native connection, opened on first use and kept open (a factory that shares none lends a dedicated one). */
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

	/** Forgets a connection closed under a call (its factory restarted), so the next use opens a new one. */
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

	/** Waits for a call as the template would, on any thread: up to the factory's timeout, with Spring's exceptions. */
	<T> T await(CompletionStage<T> call) {
		long timeoutMillis = (this.lettuce != null) ? this.lettuce.getTimeout() : 60_000;
		CompletableFuture<T> future = call.toCompletableFuture();
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
