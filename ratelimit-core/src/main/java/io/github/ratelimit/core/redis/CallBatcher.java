package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Natural batching (group commit) of single-entry acquires on one connection: a call is sent at once while fewer
 * than {@value #MAX_IN_FLIGHT} script calls are in flight; the calls that arrive while that many are in flight wait
 * for one to answer and then go together, as one script call per policy ({@code scripts/batch-call.lua}). Nothing waits for a batch to fill: a batch is whatever
 * queued meanwhile, at most {@value #MAX_BATCH} calls. Each call is still decided on its own and atomically, in
 * arrival order, at the batch's one server time; Redis' per-call work and the client's per-command work are shared.
 * <p>
 * A batch's reply is split into one reply per call in the layout of {@code scripts/single-call.lua}, so callers read
 * a batched and an unbatched answer alike. A batch that fails fails every call in it.
 * <p>
 * Standalone and Sentinel only: on a Cluster the calls of a batch would have to share a slot.
 */
final class CallBatcher {

	/** The most calls in one batch: a batch blocks Redis for about this many single decisions. */
	static final int MAX_BATCH = 128;

	/**
	 * At most this many script calls in flight: under it a call is sent at once (pipelined, as unbatched); beyond it
	 * the next batch forms while they run. One in flight measured 84% of the raw ceiling at 32 blocking threads (Redis
	 * idles while each batch's answer travels back); eight keeps Redis busy at moderate concurrency and batches at
	 * high concurrency (benchmarks, section 1).
	 */
	private static final int MAX_IN_FLIGHT = 8;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final ScriptTransport transport;

	/** What every answer (or failure) of a call in flight does: frees its place and sends what queued meanwhile. */
	private final BiConsumer<Object, Throwable> answered = (ignored, failure) -> {
		this.inFlight.decrementAndGet();
		drain();
	};

	/**
	 * A batcher of the calls of one connection.
	 * @param transport what sends the calls and batches on the connection
	 */
	CallBatcher(ScriptTransport transport) {
		this.transport = transport;
	}

	/**
	 * Decides a call, alone or in the next batch.
	 * @param call a single-entry call on the server's clock
	 * @return its reply, in the layout of {@code scripts/single-call.lua}
	 */
	CompletableFuture<List<Long>> submit(SingleEntryCall call) {
		if (this.queue.isEmpty() && takePlace()) {
			// nothing waits and a call may go: sent at once, as unbatched, without a batch's queue, list and split
			// (what a lone caller, one blocking thread, would otherwise pay on every call)
			CompletableFuture<List<Long>> reply = sendNow(call.encoded());
			reply.whenComplete(this.answered);
			return reply;
		}
		Pending pending = new Pending(call, new CompletableFuture<>());
		this.queue.add(pending);
		drain();
		return pending.reply;
	}

	/** Sends what is queued while fewer than the maximum are in flight; called on every submit and every answer. */
	private void drain() {
		while (!this.queue.isEmpty()) {
			if (!takePlace()) {
				return; // the answer of a call in flight drains the queue
			}
			List<Pending> batch = new ArrayList<>();
			Pending next;
			while (batch.size() < MAX_BATCH && (next = this.queue.poll()) != null) {
				batch.add(next);
			}
			if (batch.isEmpty()) {
				this.inFlight.decrementAndGet();
				continue;
			}
			send(batch).whenComplete(this.answered);
		}
	}

	/**
	 * Takes a place among the calls in flight, if one is free.
	 * @return whether a place was taken (the answer of the call sent in it frees it)
	 */
	private boolean takePlace() {
		while (true) {
			int running = this.inFlight.get();
			if (running >= MAX_IN_FLIGHT) {
				return false;
			}
			if (this.inFlight.compareAndSet(running, running + 1)) {
				return true;
			}
		}
	}

	/** Sends one script call; a connection that cannot be opened at once answers with the failure. */
	private CompletableFuture<List<Long>> sendNow(EncodedCall call) {
		try {
			return this.transport.send(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** One script call per policy of the batch, all sent at once; completes when every one has answered. */
	private CompletableFuture<Void> send(List<Pending> batch) {
		Map<LuaScripts.PolicyScripts, List<Pending>> byPolicy = new LinkedHashMap<>();
		for (Pending pending : batch) {
			byPolicy.computeIfAbsent(pending.call.scripts(), (scripts) -> new ArrayList<>()).add(pending);
		}
		List<CompletableFuture<?>> calls = new ArrayList<>(byPolicy.size());
		for (Map.Entry<LuaScripts.PolicyScripts, List<Pending>> group : byPolicy.entrySet()) {
			calls.add(sendGroup(group.getKey(), group.getValue()));
		}
		return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<?> sendGroup(LuaScripts.PolicyScripts scripts, List<Pending> group) {
		CompletableFuture<List<Long>> reply = sendNow(
				(group.size() == 1) ? group.get(0).call.encoded() : batchCall(scripts, group));
		return reply.whenComplete((values, failure) -> {
			if (failure != null) {
				group.forEach((pending) -> pending.reply.completeExceptionally(failure));
			}
			else if (group.size() == 1) {
				group.get(0).reply.complete(values);
			}
			else {
				// the time, then four figures per call (five where the algorithm keeps entries: one policy, one
				// algorithm): each call's reply is the time and its figures
				Long time = values.get(0);
				int figures = group.get(0).call.figures();
				for (int i = 0; i < group.size(); i++) {
					int at = 1 + figures * i;
					List<Long> own = new ArrayList<>(1 + figures);
					own.add(time);
					own.addAll(values.subList(at, at + figures));
					group.get(i).reply.complete(own);
				}
			}
		});
	}

	/** The call of several requests of one policy ({@code scripts/batch-call.lua}), on the server's clock. */
	private static EncodedCall batchCall(LuaScripts.PolicyScripts scripts, List<Pending> group) {
		int n = group.size();
		byte[][] keys = new byte[n][];
		byte[][] args = new byte[1 + n][];
		args[0] = new byte[0]; // ARGV[1]: the server's time
		for (int i = 0; i < n; i++) {
			SingleEntryCall call = group.get(i).call;
			keys[i] = call.key().getBytes(StandardCharsets.UTF_8);
			args[1 + i] = call.cost().getBytes(StandardCharsets.UTF_8);
		}
		return new EncodedCall(scripts.batch(), keys, args);
	}

	private record Pending(SingleEntryCall call, CompletableFuture<List<Long>> reply) {
	}

}
