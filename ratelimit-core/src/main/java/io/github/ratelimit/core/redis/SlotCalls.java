package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import io.github.ratelimit.core.redis.ScriptCall.Mode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/** The driver's calls, one per hash slot (one call unless on Cluster), and the give-backs between slots. */
final class SlotCalls {

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	private final RateLimitKeys keys;

	private final LuaScripts scripts;

	private final BackendConnection connection;

	private final ScriptTransport transport;

	SlotCalls(RateLimitKeys keys, LuaScripts scripts, BackendConnection connection, ScriptTransport transport) {
		this.keys = keys;
		this.scripts = scripts;
		this.connection = connection;
		this.transport = transport;
	}

	/** Acquires a request, the slots concurrently; when one denies or fails, what the others took is given back. */
	Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		List<ScriptCall> calls = calls(request.entries(), requestId);
		long time = request.explicitTimeMicros();
		if (calls.size() == 1) {
			// one slot (always, unless on Cluster): nothing to settle between slots
			return execute(calls.get(0), Mode.ACQUIRE, time, List.of())
				.map((result) -> ScriptReply.acquisition(request.entries(), calls, List.of(result)));
		}
		return Flux.fromIterable(calls)
			.flatMapSequential((call) -> execute(call, Mode.ACQUIRE, time, List.of())
				.map((result) -> new Outcome(result, null))
				.onErrorResume((ex) -> Mono.just(new Outcome(List.of(), ex))))
			.collectList()
			.flatMap((outcomes) -> settle(request.entries(), calls, outcomes));
	}

	/**
	 * The acquisition, or the first failure, once the slots that admitted are given back when another denied or
	 * failed. A give-back that fails is suppressed into that failure, or logged and counted.
	 */
	private Mono<Acquisition> settle(List<Entry> entries, List<ScriptCall> calls, List<Outcome> outcomes) {
		Throwable failure = outcomes.stream().map(Outcome::error).filter(Objects::nonNull).findFirst().orElse(null);
		List<List<Long>> results = outcomes.stream().map(Outcome::result).toList();
		boolean undo = failure != null || !ScriptReply.allAdmit(results);
		AtomicInteger failed = new AtomicInteger();
		return Flux.range(0, calls.size())
			.filter((i) -> undo && outcomes.get(i).error() == null && ScriptReply.admits(results.get(i)))
			.flatMap((i) -> giveBack(calls.get(i), results.get(i)).onErrorResume((ex) -> {
				if (failure != null) {
					failure.addSuppressed(ex);
				}
				else {
					failed.incrementAndGet();
					logger.warn("Could not give back what a denied request took for " + calls.get(i).describe()
							+ "; it stays taken until it refills or expires: " + ex,
							logger.isDebugEnabled() ? ex : null);
				}
				return Mono.empty();
			}))
			.then(Mono.defer(() -> (failure != null) ? Mono.error(failure)
					: Mono.just(ScriptReply.acquisition(entries, calls, results).withFailedGiveBacks(failed.get()))));
	}

	/** Reads each entry's state with the driver's inspect mode, one call per hash slot, blocking: nothing is taken. */
	List<PolicyDecision> inspect(RateLimitRequest request) {
		// only a release passes its request id to the script
		List<ScriptCall> calls = calls(request.entries(), "");
		List<List<Long>> replies = calls.stream()
			.map((call) -> this.connection
				.await(execute(call, Mode.INSPECT, request.explicitTimeMicros(), List.of()).toFuture()))
			.toList();
		return ScriptReply.inspection(request.entries(), calls, replies);
	}

	/** Gives back every slot, concurrently, even when one fails: the first failure passed on, the others suppressed. */
	Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros, List<Long> sequences) {
		List<ScriptCall> calls = calls(entries, requestId);
		return Flux.fromIterable(calls)
			.flatMapDelayError((call) -> execute(call, Mode.RELEASE, call.timeOf(acquiredAtMicros),
					call.sequencesOf(sequences)), calls.size(), 1)
			.then();
	}

	/** Splits entries into one script call per hash slot (a single call unless on Cluster). */
	private List<ScriptCall> calls(List<Entry> entries, String requestId) {
		boolean cluster = this.connection.isCluster();
		Map<Integer, ScriptCall> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < entries.size(); i++) {
			Entry entry = entries.get(i);
			String key = this.keys.key(entry.policy(), entry.identity());
			int slot = cluster ? ClusterSlotHashUtil.calculateSlot(key) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ScriptCall(requestId)).add(i, key, entry);
		}
		return new ArrayList<>(bySlot.values());
	}

	private Mono<List<Long>> execute(ScriptCall call, Mode mode, long timeMicros, List<Long> sequences) {
		return this.transport
			.call(call.encoded(this.scripts.forAlgorithms(call.algorithms()), mode, timeMicros, sequences));
	}

	/** Gives back what one call of an acquire took, at its reply's time (the first figure), by its sequence numbers. */
	private Mono<List<Long>> giveBack(ScriptCall call, List<Long> reply) {
		return execute(call, Mode.RELEASE, reply.get(0), ScriptReply.sequences(reply));
	}

	/** The result of one slot's script, or its failure. */
	private record Outcome(List<Long> result, @Nullable Throwable error) {
	}

}
