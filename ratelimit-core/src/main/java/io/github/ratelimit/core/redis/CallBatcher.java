package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * Natural batching of single-entry acquires on one connection (architecture, "Natural batching"): what arrives while
 * {@value #MAX_IN_FLIGHT} calls are in flight goes, when one answers, as one {@code batch-call.lua} call per policy.
 */
final class CallBatcher {

	/** The most calls in one batch: a batch blocks Redis for about this many single decisions. */
	static final int MAX_BATCH = 128;

	/** Calls in flight at most (with one, Redis idled while each batch's answer travelled back: benchmarks 1). */
	private static final int MAX_IN_FLIGHT = 8;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final ScriptTransport transport;

	/** What every answer (or failure) of a call in flight does: frees its place and sends what queued meanwhile. */
	private final BiConsumer<Object, Throwable> answered = (ignored, failure) -> {
		this.inFlight.decrementAndGet();
		drain();
	};

	CallBatcher(ScriptTransport transport) {
		this.transport = transport;
	}

	/** Decides a call on the server's clock, alone or in the next batch; the reply as {@code single-call.lua}'s. */
	CompletableFuture<List<Long>> submit(SingleEntryCall call) {
		if (this.queue.isEmpty() && takePlace()) {
			// sent as unbatched: a lone caller should not pay for a batch's queue, list and split on every call
			CompletableFuture<List<Long>> reply = this.transport.send(call.encoded());
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

	/** Takes a place among the calls in flight, if one is free; the answer of the call sent in it frees it. */
	private boolean takePlace() {
		int before = this.inFlight.getAndUpdate((running) -> (running < MAX_IN_FLIGHT) ? running + 1 : running);
		return before < MAX_IN_FLIGHT;
	}

	/** One script call per policy of the batch, all sent at once; completes when every one has answered. */
	private CompletableFuture<Void> send(List<Pending> batch) {
		Map<LuaScripts.PolicyScripts, List<Pending>> byPolicy = new LinkedHashMap<>();
		for (Pending pending : batch) {
			byPolicy.computeIfAbsent(pending.call.scripts(), (scripts) -> new ArrayList<>()).add(pending);
		}
		return CompletableFuture.allOf(byPolicy.entrySet()
			.stream()
			.map((group) -> sendGroup(group.getKey(), group.getValue()))
			.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<?> sendGroup(LuaScripts.PolicyScripts scripts, List<Pending> group) {
		CompletableFuture<List<Long>> reply = this.transport
			.send((group.size() == 1) ? group.get(0).call.encoded() : batchCall(scripts, group));
		return reply.whenComplete((values, failure) -> {
			if (failure != null) {
				group.forEach((pending) -> pending.reply.completeExceptionally(failure));
			}
			else if (group.size() == 1) {
				group.get(0).reply.complete(values);
			}
			else {
				// the time, then four figures per call (five where entries are kept)
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
		Stream<String> costs = group.stream().map((pending) -> pending.call.cost());
		return EncodedCall.of(scripts.batch(), group.stream().map((pending) -> pending.call.key()).toList(),
				Stream.concat(Stream.of(""), costs).toArray(String[]::new)); // ARGV[1] empty: the server's time
	}

	private record Pending(SingleEntryCall call, CompletableFuture<List<Long>> reply) {
	}

}
