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

import org.jspecify.annotations.Nullable;

/**
 * Natural batching of single-entry acquires on one connection, or to one Cluster master (architecture, "Natural
 * batching"): what arrives while the most calls are in flight goes, when one answers, as one call per policy.
 */
final class CallBatcher {

	/** The most calls in one batch: a batch blocks Redis for about this many single decisions. */
	static final int MAX_BATCH = 128;

	/** Calls in flight at most (with one, Redis idled while each batch's answer travelled back: benchmarks 1). */
	static final int MAX_IN_FLIGHT = 8;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final int maxInFlight;

	private final GroupSender groups;

	/** What every answer (or failure) of a call in flight does: frees its place and sends what queued meanwhile. */
	private final BiConsumer<Object, Throwable> answered = (ignored, failure) -> {
		this.inFlight.decrementAndGet();
		drain();
	};

	/** A batcher of one standalone (or Sentinel) connection: a group is one call, of several a {@code batch-call.lua}. */
	CallBatcher(ScriptTransport transport) {
		this(MAX_IN_FLIGHT, (calls, replies) -> {
			EncodedCall call = (calls.size() == 1) ? calls.get(0).encoded() : batchCall(calls);
			return transport.send(call).whenComplete((values, failure) -> complete(calls, replies, values, failure));
		});
	}

	/**
	 * A batcher whose groups (of one call or several) go through the given sender.
	 * @param maxInFlight calls in flight at most
	 */
	CallBatcher(int maxInFlight, GroupSender groups) {
		this.maxInFlight = maxInFlight;
		this.groups = groups;
	}

	/** Decides a call on the server's clock, alone or in the next batch; the reply as {@code single-call.lua}'s. */
	CompletableFuture<List<Long>> submit(SingleEntryCall call) {
		if (this.queue.isEmpty() && takePlace()) {
			// sent at once as a group of one: a lone caller should not pay for a batch's queue and split
			CompletableFuture<List<Long>> reply = new CompletableFuture<>();
			this.groups.send(List.of(call), List.of(reply)).whenComplete(this.answered);
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
		int before = this.inFlight
			.getAndUpdate((running) -> (running < this.maxInFlight) ? running + 1 : running);
		return before < this.maxInFlight;
	}

	/** One script call per policy of the batch, all sent at once; completes when every one has answered. */
	private CompletableFuture<Void> send(List<Pending> batch) {
		Map<LuaScripts.PolicyScripts, List<Pending>> byPolicy = new LinkedHashMap<>();
		for (Pending pending : batch) {
			byPolicy.computeIfAbsent(pending.call.scripts(), (scripts) -> new ArrayList<>()).add(pending);
		}
		return CompletableFuture.allOf(
				byPolicy.values().stream().map(this::sendGroup).toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<?> sendGroup(List<Pending> group) {
		return this.groups.send(group.stream().map(Pending::call).toList(),
				group.stream().map(Pending::reply).toList());
	}

	/**
	 * Completes the calls of a group with its answer: one call's own reply, or a batch's split into single-entry
	 * replies (the time, then four figures per call, five where entries are kept); a failure fails each call.
	 */
	static void complete(List<SingleEntryCall> calls, List<CompletableFuture<List<Long>>> replies,
			@Nullable List<Long> values, @Nullable Throwable failure) {
		if (failure != null || values == null) {
			Throwable error = (failure != null) ? failure : new IllegalStateException("A batch answered nothing");
			replies.forEach((reply) -> reply.completeExceptionally(error));
			return;
		}
		if (calls.size() == 1) {
			replies.get(0).complete(values);
			return;
		}
		List<List<Long>> own;
		try {
			own = split(calls, values);
		}
		catch (RuntimeException ex) {
			// an answer that cannot be read (a missing figure): no caller may wait forever
			replies.forEach((reply) -> reply.completeExceptionally(ex));
			return;
		}
		for (int i = 0; i < calls.size(); i++) {
			replies.get(i).complete(own.get(i));
		}
	}

	/** A batch's reply split into single-entry replies: the time, then four figures per call (five with entries). */
	static List<List<Long>> split(List<SingleEntryCall> calls, List<Long> values) {
		Long time = values.get(0);
		int figures = calls.get(0).figures();
		List<List<Long>> replies = new ArrayList<>(calls.size());
		for (int i = 0; i < calls.size(); i++) {
			int at = 1 + figures * i;
			List<Long> own = new ArrayList<>(1 + figures);
			own.add(time);
			own.addAll(values.subList(at, at + figures));
			replies.add(own);
		}
		return replies;
	}

	/** The call of several requests of one policy ({@code scripts/batch-call.lua}), on the server's clock. */
	private static EncodedCall batchCall(List<SingleEntryCall> calls) {
		Stream<String> costs = calls.stream().map(SingleEntryCall::cost);
		return EncodedCall.of(calls.get(0).scripts().batch(), calls.stream().map(SingleEntryCall::key).toList(),
				Stream.concat(Stream.of(""), costs).toArray(String[]::new)); // ARGV[1] empty: the server's time
	}

	/**
	 * Sends a group of calls of one policy (one call, or several) and completes each call's reply; done when the
	 * group's place may be taken again: when its connection answered (calls sent again elsewhere need not be done).
	 */
	@FunctionalInterface
	interface GroupSender {

		CompletableFuture<?> send(List<SingleEntryCall> calls, List<CompletableFuture<List<Long>>> replies);

	}

	private record Pending(SingleEntryCall call, CompletableFuture<List<Long>> reply) {
	}

}
