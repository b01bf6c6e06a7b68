package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Counters in Redis, shared by every instance: a request is one Lua script call per Cluster hash slot, taking each
 * entry's cost only when all admit. As a Spring bean it stops before its connection factory and starts after it.
 */
public final class RedisRateLimitBackend implements RateLimitBackend, SmartLifecycle {

	/** The lifecycle phase: after the web server's graceful shutdown, before the connection factory (phase 0). */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE / 2;

	/** Policy name and identity of the warm-up calls, which touch no key that exists. */
	private static final String WARM_UP = "warm-up";

	private final BackendConnection connection;

	private final RateLimitKeys keys;

	private final LuaScripts scripts = new LuaScripts();

	private final ScriptTransport transport;

	/** Null when batching is off. */
	private final @Nullable CallBatcher batcher;

	/** Null when batching is off. */
	private final @Nullable ClusterBatching clusterBatching;

	/** Off only in tests, to compare the single-entry scripts with the driver. */
	private final boolean singleEntryScripts;

	private final SlotCalls slotCalls;

	private final KeyReset reset;

	/**
	 * A backend with the default key prefix {@value RateLimitKeys#DEFAULT_PREFIX}, batching and EVALSHA.
	 * @param connectionFactory the Redis connection (Lettuce, else calls run on a bounded elastic thread)
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory) {
		this(builder(connectionFactory));
	}

	/**
	 * A backend with batching and EVALSHA.
	 * @param connectionFactory the Redis connection (Lettuce, else calls run on a bounded elastic thread)
	 * @param keyPrefix the prefix of every key
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(builder(connectionFactory).keyPrefix(keyPrefix));
	}

	private RedisRateLimitBackend(Builder builder) {
		this.keys = new RateLimitKeys(builder.keyPrefix);
		this.connection = new BackendConnection(builder.connectionFactory);
		this.transport = new ScriptTransport(this.connection, builder.scriptMode);
		this.batcher = builder.batching ? new CallBatcher(this.transport) : null;
		this.clusterBatching = builder.batching ? new ClusterBatching(this.connection, this.transport) : null;
		this.singleEntryScripts = builder.singleEntryScripts;
		this.slotCalls = new SlotCalls(this.keys, this.scripts, this.connection, this.transport);
		this.reset = new KeyReset(this.keys, this.connection);
	}

	/**
	 * A builder of a backend.
	 * @param connectionFactory the Redis connection (Lettuce, else calls run on a bounded elastic thread)
	 * @return a builder with the default key prefix, batching on and EVALSHA
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	/**
	 * Opens the connection and runs each algorithm's script once, blocking: a warm-up at startup, so that the first
	 * decisions do not pay for it within their time budget (else the first call connects, off the caller's thread).
	 * @throws RuntimeException when Redis cannot be reached
	 */
	public void connect() {
		this.connection.open();
		long now = System.currentTimeMillis() * 1000;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = RateLimitPolicy.builder(WARM_UP)
				.algorithm(algorithm)
				.limit(1)
				.window(Duration.ofSeconds(1))
				.build();
			this.connection.await(release(List.of(new Entry(policy, WARM_UP, 1)), WARM_UP, List.of(now), List.of(0L))
				.toFuture());
		}
	}

	@Override
	public String kind() {
		return "redis";
	}

	/** After a stop, opens the connection again, waiting at most two seconds (then in the background). */
	@Override
	public void start() {
		this.connection.start();
	}

	/** Closes the connection before the factory stops; a call made while stopped opens a new one. */
	@Override
	public void stop() {
		this.connection.stop();
	}

	@Override
	public boolean isRunning() {
		return this.connection.isRunning();
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/** On Cluster (Lettuce, once connected), the address of the master serving the entry's slot; null otherwise. */
	@Override
	public @Nullable String shard(Entry entry) {
		// standalone and Sentinel: no shards, and no key built for nothing (asked for every guarded request)
		return this.connection.sharded() ? this.connection.master(this.keys.key(entry.policy(), entry.identity()))
				: null;
	}

	/** On Cluster, the addresses of the masters that serve slots in the client's view of the topology. */
	@Override
	public Set<String> shards() {
		return this.connection.masters();
	}

	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		if (!this.connection.knowsTopology()) {
			return afterTopologyKnown(() -> acquire(request, requestId));
		}
		SingleEntryCall single = singleEntryCall(request);
		if (single == null) {
			return this.slotCalls.acquire(request, requestId);
		}
		CallBatcher batcher = batcherFor(single);
		if (batcher != null) {
			return Mono.fromFuture(() -> batcher.submit(single)).map(single::acquisition);
		}
		return this.transport.call(single.encoded()).map(single::acquisition);
	}

	/** Reads each entry's state with the scripts' inspect mode, one call per hash slot: nothing is taken. */
	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		return this.slotCalls.inspect(request);
	}

	/** Deletes the entries' keys (on Cluster, each in its own slot). */
	@Override
	public void reset(List<Entry> entries) {
		this.reset.reset(entries);
	}

	/** Scans for the matching keys (on Cluster, on every master) and deletes them one by one. */
	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		return this.reset.resetMatching(policyName, identity);
	}

	/** Gives back every slot, concurrently, even when one fails: the first failure passed on, the others suppressed. */
	@Override
	public Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		if (!this.connection.knowsTopology()) {
			return afterTopologyKnown(() -> release(entries, requestId, acquiredAtMicros, sequences));
		}
		return this.slotCalls.release(entries, requestId, acquiredAtMicros, sequences);
	}

	/** Runs {@code scripts/lease.lua} on the entry's key (for {@link LeasingBackend}): never batched. */
	Mono<List<Long>> lease(Entry entry, String[] args) {
		return callOnKey(entry, LuaScripts.LEASE, args);
	}

	/** An empty script on the first entry's key: a round trip to the server (on a Cluster, the master) serving it. */
	@Override
	public Mono<Void> probe(RateLimitRequest request) {
		return callOnKey(request.entries().get(0), LuaScripts.PROBE).then();
	}

	/** One call of a script on the entry's key alone, never batched. */
	@SuppressWarnings("rawtypes")
	private Mono<List<Long>> callOnKey(Entry entry, RedisScript<List> script, String... args) {
		if (!this.connection.knowsTopology()) {
			return afterTopologyKnown(() -> callOnKey(entry, script, args));
		}
		String key = key(entry.policy(), entry.identity());
		return this.transport.call(EncodedCall.of(script, List.of(key), args));
	}

	/** Asking a non-Lettuce factory whether it is a Cluster opens a connection: not on the caller's thread. */
	private <T> Mono<T> afterTopologyKnown(Supplier<Mono<T>> call) {
		return Mono.fromCallable(this.connection::isCluster)
			.subscribeOn(Schedulers.boundedElastic())
			.flatMap((known) -> call.get());
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
	 * Whether the connection is to a Redis Cluster (a factory other than Lettuce's is asked once, connecting).
	 * @return true on Cluster
	 */
	public boolean isCluster() {
		return this.connection.isCluster();
	}

	/**
	 * How the backend runs its scripts.
	 * @return the script mode in effect ({@link ScriptMode#EVALSHA} when functions were asked for without Lettuce)
	 */
	public ScriptMode getScriptMode() {
		return this.transport.mode();
	}

	/** The call of a one-entry request with its policy's own script, or null for the driver. */
	private @Nullable SingleEntryCall singleEntryCall(RateLimitRequest request) {
		if (request.entries().size() != 1 || !this.singleEntryScripts) {
			return null;
		}
		Entry entry = request.entries().get(0);
		LuaScripts.PolicyScripts script = this.scripts.forSingleEntry(entry.policy());
		return (script != null) ? SingleEntryCall.of(script, this.keys.key(entry.policy(), entry.identity()), entry,
				request.explicitTimeMicros()) : null;
	}

	/**
	 * The batcher if batching is on, the connection open, on the server's clock: the connection's, or on a Cluster
	 * the one of the key's master (Redis 7 or later); else null.
	 */
	private @Nullable CallBatcher batcherFor(SingleEntryCall single) {
		CallBatcher batcher = this.batcher;
		ClusterBatching cluster = this.clusterBatching;
		if (batcher == null || cluster == null) {
			return null;
		}
		// a restarted factory: the unbatched path opens the new connection, off the caller's thread
		this.connection.forgetIfRestarted();
		if (!this.connection.isConnected() || single.explicitTime()) {
			return null;
		}
		// only a Lettuce call sets connected, and Lettuce knows the topology: isCluster opens nothing
		return this.connection.isCluster() ? cluster.batcherFor(single.key()) : batcher;
	}

	/** How the backend runs its scripts on Redis (see {@link Builder#scriptMode}). */
	public enum ScriptMode {

		/** EVALSHA, and EVAL on NOSCRIPT: every Redis version. */
		EVALSHA,

		/** Redis functions: FUNCTION LOAD and FCALL (Redis 7 or later, Lettuce client). */
		FUNCTIONS

	}

	/** Builds a {@link RedisRateLimitBackend}; every option has a default. */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = RateLimitKeys.DEFAULT_PREFIX;

		private boolean batching = true;

		private ScriptMode scriptMode = ScriptMode.EVALSHA;

		private boolean singleEntryScripts = true;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		/**
		 * The prefix of every key.
		 * @param keyPrefix the prefix, {@value RateLimitKeys#DEFAULT_PREFIX} by default
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Whether single-entry acquires on the server's clock are batched (each still atomic, in arrival order). On by
		 * default; on a Cluster, per master, on Redis 7 or later.
		 * @param enabled false to send every acquire as its own call
		 * @return this builder
		 */
		public Builder batching(boolean enabled) {
			this.batching = enabled;
			return this;
		}

		/**
		 * How scripts run, {@link ScriptMode#EVALSHA} by default. With {@link ScriptMode#FUNCTIONS} on a Redis
		 * without {@code FCALL} every call fails with {@link InvalidDataAccessApiUsageException}; without Lettuce,
		 * EVALSHA runs.
		 * @param mode the script mode
		 * @return this builder
		 */
		public Builder scriptMode(ScriptMode mode) {
			this.scriptMode = mode;
			return this;
		}

		/** False for the driver only: for tests that compare the single-entry scripts with it. */
		Builder singleEntryScripts(boolean enabled) {
			this.singleEntryScripts = enabled;
			return this;
		}

		/**
		 * A backend, which opens no connection (the first call, or {@link RedisRateLimitBackend#connect()}, does).
		 * @return the backend
		 */
		public RedisRateLimitBackend build() {
			return new RedisRateLimitBackend(this);
		}

	}

}
