package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import io.github.ratelimit.core.redis.ScriptCall.Mode;
import org.jspecify.annotations.Nullable;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Counters in Redis, shared by every instance. A request is one EVALSHA (or FCALL: {@link #setScriptMode}) of one Lua
 * script that checks every entry and takes the cost of each only when all admit. What a call sends is laid out by {@link ScriptCall}, and its reply
 * read by {@link ScriptReply}; the backend keeps the connections, their lifecycle and the calls per hash slot.
 * <p>
 * Keys are hash-tagged by identity, so on Redis Cluster all policies of one identity share a slot and are still one
 * atomic call. Entries of different identities in different slots are evaluated per slot; when one slot denies, the
 * slots that admitted get their cost back in one more call, so a denied request uses up no quota (for that short
 * moment the quota is held, which can deny a concurrent request that would otherwise have passed). A give-back that
 * fails is logged and never changes the request's outcome.
 * <p>
 * As a Spring bean it follows the connection factory's lifecycle: stopped before the factory (closing its
 * non-blocking connection) and started after it (opening a new one in the background), so that a context stopped
 * and started again, paused and resumed, or checkpointed and restored serves its next call on both paths.
 */
public final class RedisRateLimitBackend implements RateLimitBackend, SmartLifecycle {

	/**
	 * The lifecycle phase: stopped after the web server has finished its requests (graceful shutdown and the
	 * server's own stop run in phases just below {@link SmartLifecycle#DEFAULT_PHASE}) and before the connection
	 * factory (phase 0 by default), started in the reverse order.
	 */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE / 2;

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	/** How long a start after a stop waits for the new connection before leaving it to the background. */
	private static final Duration RECONNECT_WAIT = Duration.ofSeconds(2);

	/** The request id of inspections, which take nothing under it. */
	private static final String INSPECTION = "inspect";

	/** Policy name and identity of the start-up calls, which touch no key that exists. */
	private static final String WARM_UP = "warm-up";

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	/**
	 * Lettuce's own asynchronous commands on the factory's connection (its shared native connection, unless the
	 * factory shares none), held for the backend's life and opened on first use: a script call is one Lettuce
	 * command and its future, with no template, serializer, connection wrapping or reactive pipeline around it.
	 */
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

	/** Spring's translation of Lettuce's exceptions, as the template would throw them. */
	private static final LettuceExceptionConverter EXCEPTIONS = new LettuceExceptionConverter();

	private final @Nullable LettuceConnectionFactory lettuce;

	private final RateLimitKeys keys;

	/**
	 * Whether the connection is to a Cluster: from a Lettuce factory's configuration, otherwise learned on first use
	 * by opening a cluster connection (never in the constructor, which opens nothing).
	 */
	private volatile @Nullable Boolean cluster;

	private final LuaScripts scripts = new LuaScripts();

	/** Whether requests of one entry use their policy's own script (off only in tests, to compare with the driver). */
	private volatile boolean singleEntryScripts = true;

	/** Whether single-entry acquires on the server's clock go through the batcher (standalone and Sentinel). */
	private volatile boolean batching = true;

	private final CallBatcher batcher = new CallBatcher(this::send);

	/** Whether scripts run as Redis functions (FCALL) instead of with EVALSHA; see {@link #setScriptMode}. */
	private volatile boolean functions;

	/** Whether a server without functions has been logged, so that it is logged once, not on every call. */
	private volatile boolean functionsUnsupportedLogged;

	/**
	 * Whether a non-blocking call has gone through. Spring Data Redis opens the shared native connection on first
	 * use with a blocking connect; until one call has succeeded, non-blocking calls start on a bounded elastic
	 * thread so that an event loop never waits for a (re)connect.
	 */
	private volatile boolean nativeConnected;

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

	/**
	 * A backend with the default key prefix {@value RateLimitKeys#DEFAULT_PREFIX}.
	 * @param connectionFactory the Redis connection (Lettuce for the non-blocking form)
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, RateLimitKeys.DEFAULT_PREFIX);
	}

	/**
	 * A backend.
	 * @param connectionFactory the Redis connection (Lettuce for the non-blocking form)
	 * @param keyPrefix the prefix of every key
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.keys = new RateLimitKeys(keyPrefix);
		this.connectionFactory = connectionFactory;
		this.template = new StringRedisTemplate(connectionFactory);
		this.lettuce = (connectionFactory instanceof LettuceConnectionFactory factory) ? factory : null;
		this.cluster = (this.lettuce != null) ? this.lettuce.isClusterAware() : null;
	}

	/**
	 * Opens the connection that calls use, learns whether it is to a Cluster ({@link #isCluster()}) and loads the
	 * scripts, blocking the calling thread: for application startup, so that the first decisions pay neither for the
	 * connect nor for loading scripts and client code (which a time budget of tens of milliseconds may not cover on a
	 * cold JVM). Each algorithm's script runs once, releasing nothing from a key that does not exist, on the same
	 * path decisions take. Without it, calls open the connection on first use, off the caller's thread.
	 * @throws RuntimeException when Redis cannot be reached
	 */
	public void connect() {
		if (this.lettuce != null) {
			await(nativeConnection().commands().ping(), timeoutMillis());
			this.nativeConnected = true;
		}
		else {
			this.template.execute((RedisCallback<String>) RedisConnectionCommands::ping);
		}
		isCluster();
		long now = System.currentTimeMillis() * 1000;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = RateLimitPolicy.builder(WARM_UP)
				.algorithm(algorithm)
				.limit(1)
				.window(Duration.ofSeconds(1))
				.build();
			releaseAsync(List.of(new Entry(policy, WARM_UP, 1)), WARM_UP, List.of(now), List.of(0L)).block();
		}
	}

	/**
	 * {@inheritDoc}
	 * @return {@code "redis"}
	 */
	@Override
	public String kind() {
		return "redis";
	}

	/**
	 * Starts the backend after its connection factory. After a stop, the non-blocking connection is opened again,
	 * waiting for it at most two seconds; what takes longer goes on in the background (and a failure is left to the
	 * next call, which opens it off the caller's thread).
	 */
	@Override
	public void start() {
		boolean reconnect;
		synchronized (this.lifecycleLock) {
			reconnect = this.stopped && this.lettuce != null;
			this.stopped = false;
			this.running = true;
		}
		if (reconnect) {
			CompletableFuture<String> reconnected = Mono
				.fromCallable(() -> await(nativeConnection().commands().ping(), timeoutMillis()))
				.subscribeOn(Schedulers.boundedElastic())
				.doOnSuccess((pong) -> this.nativeConnected = true)
				.toFuture();
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
	 * Stops the backend before its connection factory: the non-blocking connection is closed and forgotten, so
	 * that no call is made on a connection of a stopped factory. A call made while stopped opens a new one.
	 */
	@Override
	public void stop() {
		synchronized (this.lifecycleLock) {
			this.running = false;
			this.stopped = true;
		}
		// not under the connection's monitor, which a connect in progress may hold for the client's timeout; a
		// connection such a connect completes after this is dropped by forgetIfRestarted once the factory restarts
		NativeConnection connection = this.nativeConnection;
		this.nativeConnection = null;
		this.nativeConnected = false;
		if (connection != null) {
			try {
				connection.holder().close();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the rate limiter's Redis connection", ex);
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On Cluster (with Lettuce, once a connection has been opened), the address of the master serving the entry's
	 * hash slot in the client's view of the topology; null otherwise.
	 */
	@Override
	public @Nullable String shard(Entry entry) {
		Partitions partitions = this.partitions;
		if (partitions == null) {
			return null;
		}
		io.lettuce.core.cluster.models.partitions.RedisClusterNode master = partitions
			.getPartitionBySlot(ClusterSlotHashUtil.calculateSlot(this.keys.key(entry.policy(), entry.identity())));
		return (master != null) ? address(master) : null;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On Cluster, the addresses of the masters that serve slots in the client's view of the topology.
	 */
	@Override
	public Set<String> shards() {
		Partitions partitions = this.partitions;
		Set<String> masters = new HashSet<>();
		if (partitions != null) {
			for (io.lettuce.core.cluster.models.partitions.RedisClusterNode node : partitions) {
				if (!node.hasNoSlots()) {
					masters.add(address(node));
				}
			}
		}
		return masters;
	}

	private static String address(io.lettuce.core.cluster.models.partitions.RedisClusterNode node) {
		String host = node.getUri().getHost();
		return (host.contains(":") ? "[" + host + "]" : host) + ":" + node.getUri().getPort();
	}

	@Override
	public Acquisition acquire(RateLimitRequest request, String requestId) {
		SingleEntryCall single = singleEntryCall(request);
		if (single != null) {
			if (batches(single)) {
				return single.acquisition(await(this.batcher.submit(single), timeoutMillis()));
			}
			return single.acquisition(execute(single.encoded()));
		}
		List<ScriptCall> calls = calls(request.entries(), requestId, request.explicitTimeMicros());
		if (calls.size() == 1) {
			ScriptCall call = calls.get(0);
			return ScriptReply.acquisition(request.entries(), calls,
					List.of(execute(call, Mode.ACQUIRE, call.explicitTimeMicros())));
		}
		List<List<Long>> results = new ArrayList<>(calls.size());
		try {
			for (ScriptCall call : calls) {
				results.add(execute(call, Mode.ACQUIRE, call.explicitTimeMicros()));
			}
		}
		catch (RuntimeException ex) {
			// a later slot failed: give back what the earlier slots took, then report the failure
			for (int i = 0; i < results.size(); i++) {
				if (ScriptReply.admits(results.get(i))) {
					releaseQuietly(calls.get(i), results.get(i), ex);
				}
			}
			throw ex;
		}
		int failed = 0;
		for (int i : ScriptReply.refundsNeeded(results)) {
			try {
				giveBack(calls.get(i), results.get(i));
			}
			catch (RuntimeException ex) {
				giveBackFailed(calls.get(i), ex);
				failed++;
			}
		}
		return ScriptReply.acquisition(request.entries(), calls, results).withFailedGiveBacks(failed);
	}

	@Override
	public Mono<Acquisition> acquireAsync(RateLimitRequest request, String requestId) {
		if (this.cluster == null) {
			// a factory other than Lettuce is asked once whether it is a Cluster, with a connection: not on the
			// caller's thread
			return Mono.fromCallable(this::isCluster)
				.subscribeOn(Schedulers.boundedElastic())
				.flatMap((known) -> acquireAsync(request, requestId));
		}
		SingleEntryCall single = singleEntryCall(request);
		if (single != null) {
			if (batches(single)) {
				return Mono.fromFuture(() -> this.batcher.submit(single)).map(single::acquisition);
			}
			return executeAsync(single.encoded()).map(single::acquisition);
		}
		List<ScriptCall> calls = calls(request.entries(), requestId, request.explicitTimeMicros());
		if (calls.size() == 1) {
			// one slot (always off Cluster): one script, nothing to give back elsewhere
			ScriptCall call = calls.get(0);
			return executeAsync(call, Mode.ACQUIRE, call.explicitTimeMicros())
				.map((result) -> ScriptReply.acquisition(request.entries(), calls, List.of(result)));
		}
		return Flux.fromIterable(calls)
			.flatMapSequential((call) -> executeAsync(call, Mode.ACQUIRE, call.explicitTimeMicros())
				.map(Outcome::success)
				.onErrorResume((ex) -> Mono.just(Outcome.failure(ex))))
			.collectList()
			.flatMap((outcomes) -> {
				Throwable failure = outcomes.stream().map(Outcome::error).filter(Objects::nonNull).findFirst().orElse(null);
				if (failure != null) {
					// give back what the slots that answered took, then report the failure
					return Flux.range(0, calls.size())
						.filter((i) -> outcomes.get(i).error() == null && ScriptReply.admits(outcomes.get(i).result()))
						.flatMap((i) -> giveBackAsync(calls.get(i), outcomes.get(i).result())
							.onErrorResume((ex) -> {
								failure.addSuppressed(ex);
								return Mono.empty();
							}))
						.then(Mono.error(failure));
				}
				List<List<Long>> results = outcomes.stream().map(Outcome::result).toList();
				AtomicInteger failed = new AtomicInteger();
				return Flux.fromIterable(ScriptReply.refundsNeeded(results))
					.flatMap((i) -> giveBackAsync(calls.get(i), results.get(i))
						.onErrorResume((ex) -> {
							giveBackFailed(calls.get(i), ex);
							failed.incrementAndGet();
							return Mono.empty();
						}))
					.then(Mono.fromSupplier(() -> ScriptReply.acquisition(request.entries(), calls, results)
						.withFailedGiveBacks(failed.get())));
			});
	}

	/**
	 * Reads each entry's state with the scripts' inspect mode, one call per hash slot: the checks run, nothing is
	 * taken.
	 */
	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		List<ScriptCall> calls = calls(request.entries(), INSPECTION, request.explicitTimeMicros());
		List<List<Long>> replies = new ArrayList<>(calls.size());
		for (ScriptCall call : calls) {
			replies.add(execute(call, Mode.INSPECT, call.explicitTimeMicros()));
		}
		return ScriptReply.inspection(request.entries(), calls, replies);
	}

	/** Deletes the entries' keys (on Cluster, each in its own slot). */
	@Override
	public void reset(List<Entry> entries) {
		List<String> keys = new ArrayList<>(entries.size());
		for (Entry entry : entries) {
			keys.add(this.keys.key(entry.policy(), entry.identity()));
		}
		for (String key : keys) {
			this.template.delete(key);
		}
	}

	/**
	 * Scans for the matching keys (on Cluster, on every master) and deletes them one by one, each in its own slot.
	 */
	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		ScanOptions options = ScanOptions.scanOptions().match(this.keys.pattern(policyName, identity)).count(1000).build();
		List<String> found = new ArrayList<>();
		if (isCluster()) {
			try (RedisClusterConnection connection = this.connectionFactory.getClusterConnection()) {
				for (RedisClusterNode node : connection.clusterGetNodes()) {
					if (node.isMaster()) {
						collect(connection.scan(node, options), policyName, identity, found);
					}
				}
			}
		}
		else {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				collect(connection.keyCommands().scan(options), policyName, identity, found);
			}
		}
		long removed = 0;
		for (String key : found) {
			if (Boolean.TRUE.equals(this.template.delete(key))) {
				removed++;
			}
		}
		return removed;
	}

	private void collect(Cursor<byte[]> cursor, @Nullable String policyName, @Nullable String identity,
			List<String> found) {
		try (cursor) {
			while (cursor.hasNext()) {
				String key = new String(cursor.next(), StandardCharsets.UTF_8);
				if (this.keys.matches(key, policyName, identity)) {
					found.add(key);
				}
			}
		}
	}

	/**
	 * Gives back what a request took, slot by slot: every slot is given back even when another fails; the first
	 * failure is thrown afterwards, with the others suppressed.
	 */
	@Override
	public void release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros, List<Long> sequences) {
		RuntimeException failure = null;
		for (ScriptCall call : calls(entries, requestId, -1)) {
			try {
				execute(call, Mode.RELEASE, call.timeOf(acquiredAtMicros), call.sequencesOf(sequences));
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** {@link #release} without blocking: the slots are given back concurrently, each to its end. */
	@Override
	public Mono<Void> releaseAsync(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		if (this.cluster == null) {
			// as in acquireAsync
			return Mono.fromCallable(this::isCluster)
				.subscribeOn(Schedulers.boundedElastic())
				.flatMap((known) -> releaseAsync(entries, requestId, acquiredAtMicros, sequences));
		}
		List<ScriptCall> calls = calls(entries, requestId, -1);
		return Flux.fromIterable(calls)
			.flatMapDelayError((call) -> executeAsync(call, Mode.RELEASE, call.timeOf(acquiredAtMicros),
					call.sequencesOf(sequences)), calls.size(), 1)
			.then();
	}

	/**
	 * A slot that admitted a request another slot denied could not be given back: the request stays denied, and the
	 * identity's quota in that slot stays taken until it refills or expires.
	 */
	private void giveBackFailed(ScriptCall call, Throwable failure) {
		if (logger.isWarnEnabled()) {
			logger.warn("Could not give back what a denied request took for " + call.describe() + "; it stays taken "
					+ "until it refills or expires: " + failure, logger.isDebugEnabled() ? failure : null);
		}
	}

	private void releaseQuietly(ScriptCall call, List<Long> reply, RuntimeException failure) {
		try {
			giveBack(call, reply);
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
		}
	}

	/** The result of one slot's script, or its failure. */
	private record Outcome(List<Long> result, @Nullable Throwable error) {

		static Outcome success(List<Long> result) {
			return new Outcome(result, null);
		}

		static Outcome failure(Throwable error) {
			return new Outcome(List.of(), error);
		}

	}

	/**
	 * The storage key of a policy and identity.
	 * @param policy the policy
	 * @param identity the raw identity
	 * @return the Redis key
	 */
	public String key(RateLimitPolicy policy, String identity) {
		return this.keys.key(policy, identity);
	}

	/**
	 * Whether the connection is to a Redis Cluster (entries are then grouped by hash slot). A Lettuce factory tells
	 * by its configuration; any other factory is asked once, on the first call (or {@link #connect()}), by opening
	 * a cluster connection: one it cannot open means no Cluster.
	 * @return true on Cluster
	 */
	public boolean isCluster() {
		Boolean cluster = this.cluster;
		if (cluster == null) {
			cluster = opensClusterConnection(this.connectionFactory);
			this.cluster = cluster;
		}
		return cluster;
	}

	private static boolean opensClusterConnection(RedisConnectionFactory connectionFactory) {
		try {
			connectionFactory.getClusterConnection().close();
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/**
	 * The call of a request of one entry with a script of its own (see {@link LuaScripts#forSingleEntry}), or null
	 * for the driver.
	 */
	private @Nullable SingleEntryCall singleEntryCall(RateLimitRequest request) {
		if (request.entries().size() != 1 || !this.singleEntryScripts) {
			return null;
		}
		Entry entry = request.entries().get(0);
		LuaScripts.PolicyScripts script = this.scripts.forSingleEntry(entry.policy());
		return (script != null) ? new SingleEntryCall(script, this.keys.key(entry.policy(), entry.identity()), entry,
				request.explicitTimeMicros()) : null;
	}

	/**
	 * Whether single-entry acquires on the server's clock are batched: while one script call is in flight on the
	 * connection, the acquires that arrive go together as one call per policy once it answers (group commit: no
	 * added wait, each acquire still decided atomically and in arrival order). On by default; standalone and
	 * Sentinel only (a Cluster never batches). What it pays is measured in the benchmarks.
	 * @param enabled false to send every acquire as its own call
	 */
	public void setBatching(boolean enabled) {
		this.batching = enabled;
	}

	/**
	 * How scripts run on Redis. {@link ScriptMode#EVALSHA} (the default) works on every Redis; a server that lost
	 * its script cache (a restart, a failover to a replica: scripts are not replicated) answers the first call of
	 * each script with NOSCRIPT, and the call is sent again with the script. {@link ScriptMode#FUNCTIONS} (Redis 7+)
	 * loads each script as a function library ({@code FUNCTION LOAD}, on every master of a Cluster) and calls it
	 * with {@code FCALL}; functions are persisted and replicated, so a promoted replica has them. A function not
	 * found is loaded and called once more, as on NOSCRIPT. On a server that does not know {@code FCALL} every call
	 * fails with {@link InvalidDataAccessApiUsageException} (logged once): functions are never silently replaced by
	 * EVALSHA. Functions need the Lettuce client: with another client scripts run with EVALSHA, and this setter logs
	 * it.
	 * @param mode the script mode
	 */
	public void setScriptMode(ScriptMode mode) {
		if (mode == ScriptMode.FUNCTIONS && this.lettuce == null) {
			logger.warn("Redis functions need the Lettuce client; the connection factory is "
					+ this.connectionFactory.getClass().getName() + ", so rate-limit scripts run with EVALSHA");
			this.functions = false;
			return;
		}
		this.functions = (mode == ScriptMode.FUNCTIONS);
	}

	/**
	 * How the backend runs its scripts.
	 * @return the script mode in effect ({@link ScriptMode#EVALSHA} when functions were asked for without Lettuce)
	 */
	public ScriptMode getScriptMode() {
		return this.functions ? ScriptMode.FUNCTIONS : ScriptMode.EVALSHA;
	}

	/** How the backend runs its scripts on Redis (see {@link #setScriptMode}). */
	public enum ScriptMode {

		/** EVALSHA, and EVAL on NOSCRIPT: every Redis version. */
		EVALSHA,

		/** Redis functions: FUNCTION LOAD and FCALL (Redis 7 or later, Lettuce client). */
		FUNCTIONS

	}

	private boolean batches(SingleEntryCall single) {
		if (!this.batching) {
			return false;
		}
		// a factory stopped and started again: the unbatched path opens the new connection, off the caller's thread
		forgetIfRestarted();
		return this.batching && this.nativeConnected && !single.explicitTime() && Boolean.FALSE.equals(this.cluster);
	}

	/**
	 * Whether requests of one entry use their policy's own script; for tests that compare them with the driver.
	 * @param enabled false for the driver only
	 */
	void singleEntryScripts(boolean enabled) {
		this.singleEntryScripts = enabled;
	}

	/** Splits entries into one script call per hash slot (a single call unless on Cluster). */
	private List<ScriptCall> calls(List<Entry> entries, String requestId, long explicitTimeMicros) {
		boolean cluster = isCluster();
		Map<Integer, ScriptCall> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < entries.size(); i++) {
			Entry entry = entries.get(i);
			String key = this.keys.key(entry.policy(), entry.identity());
			int slot = cluster ? ClusterSlotHashUtil.calculateSlot(key) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ScriptCall(requestId, explicitTimeMicros)).add(i, key, entry);
		}
		return new ArrayList<>(bySlot.values());
	}

	private List<Long> execute(ScriptCall call, Mode mode, long timeMicros) {
		return execute(call, mode, timeMicros, List.of());
	}

	/** Gives back what one call of an acquire took, by its reply's time and sequence numbers. */
	private List<Long> giveBack(ScriptCall call, List<Long> reply) {
		return execute(call, Mode.RELEASE, ScriptReply.timeMicros(reply), ScriptReply.sequences(reply));
	}

	private List<Long> execute(ScriptCall call, Mode mode, long timeMicros, List<Long> sequences) {
		return execute(call.encoded(script(call), mode, timeMicros, sequences));
	}

	/**
	 * A blocking call: on Lettuce, {@link #send} awaited up to the factory's timeout (as the template would); on
	 * another client, through the template.
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	private List<Long> execute(EncodedCall call) {
		if (this.lettuce == null) {
			return ScriptReply.toLongs(
					this.template.execute((RedisScript<List>) call.script(), call.keyStrings(), call.argStrings()));
		}
		forgetIfRestarted();
		List<Long> reply = await(send(call), timeoutMillis());
		// the connection is open: later calls may batch, and non-blocking ones need not start elsewhere
		this.nativeConnected = true;
		return reply;
	}

	private Mono<List<Long>> executeAsync(ScriptCall call, Mode mode, long timeMicros) {
		return executeAsync(call, mode, timeMicros, List.of());
	}

	/** {@link #giveBack} without blocking. */
	private Mono<List<Long>> giveBackAsync(ScriptCall call, List<Long> reply) {
		return executeAsync(call, Mode.RELEASE, ScriptReply.timeMicros(reply), ScriptReply.sequences(reply));
	}

	private Mono<List<Long>> executeAsync(ScriptCall call, Mode mode, long timeMicros, List<Long> sequences) {
		return executeAsync(call.encoded(script(call), mode, timeMicros, sequences));
	}

	/**
	 * A non-blocking call: on Lettuce, {@link #send}, started on a bounded elastic thread until a call has gone
	 * through (the first use opens the connection with a blocking connect); on another client, the blocking call on
	 * a bounded elastic thread.
	 */
	private Mono<List<Long>> executeAsync(EncodedCall call) {
		if (this.lettuce == null) {
			return Mono.fromCallable(() -> execute(call)).subscribeOn(Schedulers.boundedElastic());
		}
		forgetIfRestarted();
		Mono<List<Long>> result = Mono.fromCompletionStage(() -> send(call));
		if (this.nativeConnected) {
			return result;
		}
		return result.subscribeOn(Schedulers.boundedElastic()).doOnSuccess((ok) -> this.nativeConnected = true);
	}

	/**
	 * Sends a call on the native connection, the one path of every call (blocking, non-blocking and the batcher's),
	 * from any thread (an event loop included): EVALSHA, and EVAL on NOSCRIPT (which loads the script), or FCALL in
	 * the functions mode (see {@link #setScriptMode}). A connection
	 * closed under the backend is forgotten and the call made once more on a new one, opened on a bounded elastic
	 * thread. Failures are Spring's translation of Lettuce's exceptions.
	 */
	private CompletableFuture<List<Long>> send(EncodedCall call) {
		NativeConnection connection = nativeConnection();
		CompletionStage<List<Long>> first;
		try {
			first = evaluate(connection, call);
		}
		catch (RuntimeException ex) {
			// a client shut down under the connection refuses the command at once
			first = CompletableFuture.failedFuture(ex);
		}
		return first.<CompletionStage<List<Long>>>handle((reply, ex) -> {
			if (ex == null) {
				return CompletableFuture.completedFuture(reply);
			}
			RuntimeException failure = translate(ex);
			if (forgetIfClosed(connection, failure)) {
				// once more on a new connection, opened off the caller's thread
				return CompletableFuture
					.supplyAsync(() -> evaluate(nativeConnection(), call),
							(task) -> Schedulers.boundedElastic().schedule(task))
					.thenCompose((retry) -> retry)
					.exceptionallyCompose((retryFailure) -> CompletableFuture.failedFuture(translate(retryFailure)));
			}
			return CompletableFuture.failedFuture(failure);
		}).thenCompose((next) -> next).toCompletableFuture();
	}

	private CompletionStage<List<Long>> evaluate(NativeConnection connection, EncodedCall call) {
		if (this.functions) {
			return callFunction(connection, call);
		}
		RedisFuture<List<Object>> evalsha = connection.commands()
			.evalsha(call.script().getSha1(), ScriptOutputType.MULTI, call.keys(), call.args());
		return evalsha.<CompletionStage<List<Object>>>handle((reply, ex) -> {
			if (ex == null) {
				return CompletableFuture.completedFuture(reply);
			}
			if (isNoScript(ex)) {
				return connection.commands()
					.eval(call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), ScriptOutputType.MULTI,
							call.keys(), call.args());
			}
			return CompletableFuture.failedFuture(ex);
		}).thenCompose((next) -> next).thenApply(ScriptReply::toLongs);
	}

	/**
	 * FCALL of the script's function; when the server has no such function (never loaded, or lost with a restart
	 * without persistence or a {@code FUNCTION FLUSH}), its library is loaded, on a bounded elastic thread (on a
	 * Cluster, on every master, which may open connections to them), and the call made once more.
	 */
	private CompletionStage<List<Long>> callFunction(NativeConnection connection, EncodedCall call) {
		String name = LuaScripts.functionName(call.script());
		RedisFuture<List<Object>> fcall = connection.commands().fcall(name, ScriptOutputType.MULTI, call.keys(),
				call.args());
		return fcall.<CompletionStage<List<Object>>>handle((reply, ex) -> {
			if (ex == null) {
				return CompletableFuture.completedFuture(reply);
			}
			if (hasMessage(ex, "Function not found")) {
				return CompletableFuture
					.supplyAsync(() -> loadFunction(connection, call), (task) -> Schedulers.boundedElastic().schedule(task))
					.thenCompose((loaded) -> loaded)
					.thenCompose((loaded) -> connection.commands()
						.<List<Object>>fcall(name, ScriptOutputType.MULTI, call.keys(), call.args()));
			}
			if (hasMessage(ex, "unknown command")) {
				return CompletableFuture.failedFuture(functionsUnsupported(ex));
			}
			return CompletableFuture.failedFuture(ex);
		}).thenCompose((next) -> next).thenApply(ScriptReply::toLongs);
	}

	/** Loads the library of a call's script: on a Cluster on every master, else on the connection's server. */
	@SuppressWarnings("unchecked")
	private static CompletionStage<?> loadFunction(NativeConnection connection, EncodedCall call) {
		String library = LuaScripts.library(call.script());
		if (connection.commands() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
			// Lettuce sends FUNCTION LOAD to one node of a Cluster (unlike SCRIPT LOAD, which goes to every node)
			return ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).upstream()
				.commands()
				.functionLoad(library, true);
		}
		return connection.commands().functionLoad(library, true);
	}

	private RuntimeException functionsUnsupported(Throwable error) {
		String message = "Redis functions need Redis 7 or later, and this Redis does not know FCALL: run the "
				+ "rate-limit scripts with EVALSHA (ratelimit.redis.script-mode=evalsha) or upgrade Redis";
		if (!this.functionsUnsupportedLogged) {
			this.functionsUnsupportedLogged = true;
			logger.error(message + "; every rate-limit decision fails over to its failure mode until then");
		}
		return new InvalidDataAccessApiUsageException(message, error);
	}

	/** Waits for a Lettuce command as the template would: up to the timeout, with Spring's exceptions. */
	private static <T> T await(CompletionStage<T> command, long timeoutMillis) {
		CompletableFuture<T> future = command.toCompletableFuture();
		try {
			return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			future.cancel(true);
			throw translate(new io.lettuce.core.RedisCommandInterruptedException(ex));
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw translate(new io.lettuce.core.RedisCommandTimeoutException(
					"Command timed out after " + timeoutMillis + " ms"));
		}
		catch (ExecutionException ex) {
			throw translate((ex.getCause() != null) ? ex.getCause() : ex);
		}
	}

	private long timeoutMillis() {
		return (this.lettuce != null) ? this.lettuce.getTimeout() : 60_000;
	}

	/** Lettuce's exceptions as Spring's, the ones the template throws. */
	private static RuntimeException translate(Throwable error) {
		Throwable cause = (error instanceof CompletionException && error.getCause() != null) ? error.getCause() : error;
		if (cause instanceof RuntimeException runtime) {
			RuntimeException translated = EXCEPTIONS.translateExceptionIfPossible(runtime);
			return (translated != null) ? translated : runtime;
		}
		return new IllegalStateException(cause);
	}

	/**
	 * Forgets a connection that was closed under the backend (the connection factory was stopped and started again,
	 * as Spring does when it pauses a context or refreshes it), so that the call is made again on a new one.
	 * Reconnects after a Redis outage need nothing of this: the client reconnects the same connection.
	 */
	private boolean forgetIfClosed(NativeConnection connection, Throwable error) {
		if (!hasMessage(error, "Connection is closed") && !hasMessage(error, "Connection closed")) {
			return false;
		}
		synchronized (this) {
			if (this.nativeConnection == connection) {
				this.nativeConnection = null;
				this.nativeConnected = false;
			}
		}
		return true;
	}

	/**
	 * Forgets the connection when its factory was stopped and started again since it was opened (outside this
	 * backend's own lifecycle, which closes it on stop), so that the call opens a new one, off the caller's thread,
	 * instead of failing on the old client.
	 */
	private void forgetIfRestarted() {
		NativeConnection connection = this.nativeConnection;
		if (connection == null || this.lettuce == null || nativeClient() == this.nativeClientAtOpen) {
			return;
		}
		synchronized (this) {
			if (this.nativeConnection == connection) {
				this.nativeConnection = null;
				this.nativeConnected = false;
			}
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

	/**
	 * The native connection, opened on first use: a Spring Data Redis connection of the factory (a cluster
	 * connection on a Cluster, whose commands go to the node of their first key's slot), kept open so that a factory
	 * that shares no native connection lends it a dedicated one for the backend's life.
	 */
	@SuppressWarnings("unchecked")
	private NativeConnection nativeConnection() {
		NativeConnection connection = this.nativeConnection;
		if (connection == null) {
			synchronized (this) {
				connection = this.nativeConnection;
				if (connection == null) {
					LettuceConnectionFactory factory = Objects.requireNonNull(this.lettuce);
					this.nativeClientAtOpen = nativeClient();
					RedisConnection holder = factory.isClusterAware() ? factory.getClusterConnection()
							: factory.getConnection();
					connection = new NativeConnection(holder,
							(RedisClusterAsyncCommands<byte[], byte[]>) ((LettuceConnection) holder).getNativeConnection());
					if (connection.commands() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
						this.partitions = cluster.getStatefulConnection().getPartitions();
					}
					this.nativeConnection = connection;
				}
			}
		}
		return connection;
	}

	/** The connection that holds the native one open, and Lettuce's asynchronous commands on it. */
	private record NativeConnection(RedisConnection holder, RedisClusterAsyncCommands<byte[], byte[]> commands) {
	}

	private static boolean isNoScript(Throwable error) {
		return hasMessage(error, "NOSCRIPT");
	}

	private static boolean hasMessage(Throwable error, String text) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains(text)) {
				return true;
			}
		}
		return false;
	}

	@SuppressWarnings("rawtypes")
	private RedisScript<List> script(ScriptCall call) {
		return this.scripts.forAlgorithms(call.algorithms());
	}

}
