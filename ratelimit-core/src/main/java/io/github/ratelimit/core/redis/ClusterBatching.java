package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Natural batching on a Cluster (architecture, "Natural batching"): one {@link CallBatcher} per master, whose groups
 * go as one {@code cluster-batch-call.lua} call to that master's own connection, with keys of every slot it serves.
 * A call whose key the master does not serve (moved, migrating, a failover), every call of a batch that never left
 * (no connection to the node yet, a node the topology no longer knows) or that the master redirected or could not
 * compile, and every call whose master changed while it queued, is sent again on its own through the cluster
 * connection. A master that cannot compile the script (Redis older than 7) is not batched for a while.
 */
final class ClusterBatching {

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	/**
	 * Calls in flight per master at most: fewer than on standalone, so that what a master's callers send while it
	 * works gathers into larger batches (benchmarks, section 10).
	 */
	static final int MAX_IN_FLIGHT_PER_MASTER = 1;

	/** How long a master that could not compile the script (Redis older than 7) gets no batch. */
	static final long REFUSED_FOR_NANOS = TimeUnit.MINUTES.toNanos(5);

	/**
	 * Errors after which a group's calls go one by one through the cluster connection: a redirection (the first key
	 * moved) or a script the master cannot compile (neither ran), or the node's connection closed under the call
	 * (the cluster connection finds the node again, as an unbatched call is sent once more on a closed connection;
	 * a call that ran may so count twice, which only under-admits). Other refusals (CLUSTERDOWN, LOADING, READONLY
	 * ...) fail each call: the calls one by one would meet the same refusal, and a READONLY may answer a replayed
	 * batch that already ran.
	 */
	private static final List<String> REDIRECTED = List.of("MOVED ", "ASK ", "Error compiling script", "shebang",
			"Connection closed", "Connection is closed");

	/** The admits figure of a call the master did not decide (cluster-batch-call.lua). */
	private static final long UNDECIDED = -1;

	private final BackendConnection connection;

	private final ScriptTransport transport;

	private final Map<String, CallBatcher> byMaster = new ConcurrentHashMap<>();

	/** Per master id, until when (System.nanoTime) it gets no batch: it could not compile the script. */
	private final Map<String, Long> refusedUntil = new ConcurrentHashMap<>();

	ClusterBatching(BackendConnection connection, ScriptTransport transport) {
		this.connection = connection;
		this.transport = transport;
	}

	/** The batcher of the master serving the key, or null (no master known, or one that cannot run the script). */
	@Nullable CallBatcher batcherFor(String key) {
		String master = this.connection.masterId(key);
		if (master == null || refused(master)) {
			return null;
		}
		return this.byMaster.computeIfAbsent(master,
				(id) -> new CallBatcher(MAX_IN_FLIGHT_PER_MASTER, (calls, replies) -> send(id, calls, replies)));
	}

	private boolean refused(String master) {
		Long until = this.refusedUntil.get(master);
		if (until == null) {
			return false;
		}
		if (System.nanoTime() - until < 0) {
			return true;
		}
		this.refusedUntil.remove(master, until);
		return false;
	}

	/**
	 * One call to the master on its own connection for a group of one policy, of the calls it still serves: alone,
	 * the call of one request, else a batch. The others go one by one through the cluster connection, as do the
	 * calls the master did not decide (admits -1: a key it does not serve), or all of them when the call was never
	 * sent or was redirected. The future completes once the master answered: what is sent again elsewhere does not
	 * hold the master's place (a call redirected to a frozen node would hold it until the client's command timeout,
	 * and every call for this master would wait behind it). A batcher whose node is no longer a master is dropped.
	 */
	CompletableFuture<?> send(String master, List<SingleEntryCall> calls,
			List<CompletableFuture<List<Long>>> replies) {
		Group own = new Group();
		Group moved = new Group();
		boolean refused = refused(master); // what queued before the master could not compile the script
		for (int i = 0; i < calls.size(); i++) {
			boolean served = !refused && master.equals(this.connection.masterId(calls.get(i).key()));
			(served ? own : moved).add(calls.get(i), replies.get(i));
		}
		if (!this.connection.isMaster(master)) {
			this.byMaster.remove(master); // what still queues there finds its new master when sent
		}
		oneByOne(moved);
		if (own.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		EncodedCall call = (own.size() == 1) ? own.calls.get(0).encoded() : batchCall(own.calls);
		return this.connection.node(master).handle((node, notSent) -> {
			if (node == null) {
				oneByOne(own);
				return CompletableFuture.completedFuture(null);
			}
			return sendTo(master, node, call, own);
		}).thenCompose((done) -> done);
	}

	/** Sends a group's call on the master's own connection and completes (or sends again) its calls. */
	private CompletableFuture<?> sendTo(String master, BackendConnection.NativeConnection node, EncodedCall call,
			Group group) {
		return this.transport.sendTo(node, call).handle((values, failure) -> {
			try {
				if (failure == null && values != null && group.size() > 1) {
					completeOrResend(group, CallBatcher.split(group.calls, values));
				}
				else if (failure == null || !redirected(failure)) {
					// a group of one: its own reply; or what failed every call
					CallBatcher.complete(group.calls, group.replies, values, failure);
				}
				else {
					if (ScriptTransport.hasMessage(failure, "Error compiling script")) {
						refuse(master);
					}
					oneByOne(group);
				}
			}
			catch (RuntimeException ex) {
				// an answer that cannot be read (a missing figure): no caller may wait forever
				group.replies.forEach((reply) -> reply.completeExceptionally(ex));
			}
			return null;
		});
	}

	private void refuse(String master) {
		this.refusedUntil.put(master, System.nanoTime() + REFUSED_FOR_NANOS);
		logger.info("Redis Cluster master " + master + " cannot run a batch (Redis older than 7): its single-entry "
				+ "decisions are not batched for the next " + REFUSED_FOR_NANOS / 60_000_000_000L + " minutes");
	}

	/** Completes the calls the master decided; the others, not served there, go one by one. */
	private void completeOrResend(Group group, List<List<Long>> own) {
		Group again = new Group();
		for (int i = 0; i < group.size(); i++) {
			if (own.get(i).get(1) == UNDECIDED) {
				again.add(group.calls.get(i), group.replies.get(i));
			}
			else {
				group.replies.get(i).complete(own.get(i));
			}
		}
		oneByOne(again);
	}

	private static boolean redirected(Throwable failure) {
		return REDIRECTED.stream().anyMatch((text) -> ScriptTransport.hasMessage(failure, text));
	}

	/**
	 * Each call of a group sent on its own, in the group's order, through the cluster connection, which follows
	 * {@code MOVED} and {@code ASK} (and opens a connection not yet open on a bounded elastic thread, never on this
	 * one); nothing waits for them but their callers.
	 */
	private void oneByOne(Group group) {
		for (int i = 0; i < group.size(); i++) {
			CompletableFuture<List<Long>> reply = group.replies.get(i);
			this.transport.call(group.calls.get(i).encoded()).toFuture().whenComplete((values, failure) -> {
				if (failure != null) {
					reply.completeExceptionally(failure);
				}
				else {
					reply.complete(values);
				}
			});
		}
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

	/** Calls of a group and their replies, in the group's order. */
	private static final class Group {

		private final List<SingleEntryCall> calls = new ArrayList<>();

		private final List<CompletableFuture<List<Long>>> replies = new ArrayList<>();

		void add(SingleEntryCall call, CompletableFuture<List<Long>> reply) {
			this.calls.add(call);
			this.replies.add(reply);
		}

		int size() {
			return this.calls.size();
		}

		boolean isEmpty() {
			return this.calls.isEmpty();
		}

	}

}
