package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Natural batching on a Cluster (architecture, "Natural batching"): one {@link CallBatcher} per master, whose groups
 * go as one {@code cluster-batch-call.lua} call to that master's own connection, with keys of every slot it serves.
 * A call whose key the master does not serve (moved, migrating, a failover), or every call of a batch it refused
 * before running it, is sent again on its own through the cluster connection, which follows redirections. Redis 7
 * only: 6.2 cannot compile the script's flags, so on 6.2 nothing is batched.
 */
final class ClusterBatching {

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	/**
	 * Calls in flight per master at most: fewer than on standalone, so that what a master's callers send while it
	 * works gathers into larger batches (benchmarks, section 10).
	 */
	static final int MAX_IN_FLIGHT_PER_MASTER = 1;

	/** Errors that show a batch did not run: Redis refused it before it started or could not compile it, or no node. */
	private static final List<String> NOT_RUN = List.of("MOVED ", "ASK ", "CROSSSLOT", "TRYAGAIN", "CLUSTERDOWN",
			"READONLY", "MASTERDOWN", "LOADING", "Error compiling script", "shebang",
			"partition is not known", "Unable to connect");

	/** The admits figure of a call the master did not decide (cluster-batch-call.lua). */
	private static final long UNDECIDED = -1;

	private final BackendConnection connection;

	private final ScriptTransport transport;

	private final Map<String, CallBatcher> byMaster = new ConcurrentHashMap<>();

	/** Null until the server's version is known: true on Redis 7 or later. */
	private volatile @Nullable Boolean supported;

	private final AtomicBoolean asked = new AtomicBoolean();

	ClusterBatching(BackendConnection connection, ScriptTransport transport) {
		this.connection = connection;
		this.transport = transport;
	}

	/** The batcher of the master serving the key, or null (Redis older than 7, not yet known, or no master known). */
	@Nullable CallBatcher batcherFor(String key) {
		Boolean known = this.supported;
		if (known == null) {
			askVersion();
			return null;
		}
		String master = known ? this.connection.masterId(key) : null;
		return (master != null) ? this.byMaster.computeIfAbsent(master, (id) -> new CallBatcher(this.transport,
				MAX_IN_FLIGHT_PER_MASTER, (calls, replies) -> send(id, calls, replies))) : null;
	}

	/** Asks the server's version once, without waiting: until it answers, calls go unbatched. */
	private void askVersion() {
		if (this.asked.compareAndSet(false, true)) {
			knowVersion();
		}
	}

	/** Asks the server's version (of the node Lettuce sends server commands to); asked again after a failure. */
	CompletableFuture<?> knowVersion() {
		try {
			return this.connection.nativeConnection().commands().info("server").toCompletableFuture()
				.whenComplete((info, failure) -> {
					if (failure != null) {
						this.asked.set(false); // asked again by a later call
						return;
					}
					this.supported = majorVersion(info) >= 7;
					if (!this.supported) {
						logger.info("Redis Cluster older than 7: single-entry decisions are not batched");
					}
				});
		}
		catch (RuntimeException ex) {
			this.asked.set(false);
			return CompletableFuture.failedFuture(ex);
		}
	}

	static int majorVersion(String info) {
		int at = info.indexOf("redis_version:");
		if (at < 0) {
			return 0;
		}
		int start = at + "redis_version:".length();
		int end = start;
		while (end < info.length() && Character.isDigit(info.charAt(end))) {
			end++;
		}
		return (end > start) ? Integer.parseInt(info.substring(start, end)) : 0;
	}

	/**
	 * One call to the master for a group of one policy; the calls it did not decide (admits -1: a key it does not
	 * serve), or all of them when it refused the call before running it, are sent again one by one.
	 */
	private CompletableFuture<?> send(String master, List<SingleEntryCall> calls,
			List<CompletableFuture<List<Long>>> replies) {
		EncodedCall batch = batchCall(calls);
		return this.connection.node(master)
			.thenCompose((node) -> this.transport.sendTo(node, batch))
			.handle((values, failure) -> {
				if (failure == null && values != null) {
					return completeOrResend(calls, replies, CallBatcher.split(calls, values));
				}
				if (failure != null && !notRun(failure)) {
					CallBatcher.complete(calls, replies, null, failure);
					return CompletableFuture.completedFuture(null);
				}
				if (failure != null && ScriptTransport.hasMessage(failure, "Error compiling script")) {
					this.supported = false; // a Redis older than 7 among the masters
				}
				return oneByOne(calls, replies);
			})
			.thenCompose((done) -> done);
	}

	/** Completes the calls the master decided; the others, not served there, go one by one. */
	private CompletableFuture<?> completeOrResend(List<SingleEntryCall> calls,
			List<CompletableFuture<List<Long>>> replies, List<List<Long>> own) {
		List<SingleEntryCall> again = new ArrayList<>();
		List<CompletableFuture<List<Long>>> againReplies = new ArrayList<>();
		for (int i = 0; i < calls.size(); i++) {
			if (own.get(i).get(1) == UNDECIDED) {
				again.add(calls.get(i));
				againReplies.add(replies.get(i));
			}
			else {
				replies.get(i).complete(own.get(i));
			}
		}
		return again.isEmpty() ? CompletableFuture.completedFuture(null) : oneByOne(again, againReplies);
	}

	private static boolean notRun(Throwable failure) {
		return NOT_RUN.stream().anyMatch((text) -> ScriptTransport.hasMessage(failure, text));
	}

	/** Each call of a group that did not run sent on its own, in the group's order, through the cluster connection. */
	private CompletableFuture<Void> oneByOne(List<SingleEntryCall> calls,
			List<CompletableFuture<List<Long>>> replies) {
		List<CompletableFuture<?>> sent = new ArrayList<>(calls.size());
		for (int i = 0; i < calls.size(); i++) {
			CompletableFuture<List<Long>> reply = replies.get(i);
			sent.add(this.transport.send(calls.get(i).encoded()).whenComplete((values, failure) -> {
				if (failure != null) {
					reply.completeExceptionally(failure);
				}
				else {
					reply.complete(values);
				}
			}));
		}
		return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new));
	}

	/**
	 * The call of several requests of one policy on one master ({@code scripts/cluster-batch-call.lua}): the first
	 * key declared, the server's clock, the costs, then the other keys.
	 */
	private static EncodedCall batchCall(List<SingleEntryCall> calls) {
		int count = calls.size();
		String[] args = new String[2 * count];
		args[0] = ""; // the server's time
		for (int i = 0; i < count; i++) {
			args[1 + i] = calls.get(i).cost();
			if (i > 0) {
				args[count + i] = calls.get(i).key();
			}
		}
		return EncodedCall.of(calls.get(0).scripts().clusterBatch(), List.of(calls.get(0).key()), args);
	}

}
