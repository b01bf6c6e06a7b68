package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A request whose entries live on several shards (Redis Cluster masters), as one request per shard, each decided
 * under its own shard's breaker at the same time, and combined as the backend combines slots: admitted when every part
 * admits, else what the admitting parts took is given back (architecture.md, "A breaker per master").
 * {@code positions} holds, per part, its entries' places in the request.
 */
record ShardSplit(RateLimitRequest request, List<RateLimitRequest> parts, List<List<Integer>> positions) {

	/** The split of a request by each entry's shard (null: the whole backend), or null when they share one. */
	static @Nullable ShardSplit of(RateLimitRequest request, List<@Nullable String> shards) {
		Map<@Nullable String, List<Integer>> byShard = new LinkedHashMap<>();
		for (int i = 0; i < shards.size(); i++) {
			byShard.computeIfAbsent(shards.get(i), (shard) -> new ArrayList<>()).add(i);
		}
		if (byShard.size() < 2) {
			return null;
		}
		List<RateLimitRequest> parts = new ArrayList<>(byShard.size());
		for (List<Integer> indexes : byShard.values()) {
			List<RateLimitRequest.Entry> part = new ArrayList<>(indexes.size());
			indexes.forEach((index) -> part.add(request.entries().get(index)));
			parts.add(request.withEntries(part));
		}
		return new ShardSplit(request, parts, List.copyOf(byShard.values()));
	}

	/** Decides the parts at the same time; a part decided before the caller cancels is given back. */
	Mono<RateLimitDecision> decide(Function<RateLimitRequest, Mono<RateLimitDecision>> decider, ErrorCounts errors) {
		return Flux.fromIterable(this.parts)
			.flatMapSequential(decider)
			.collectList()
			.map((decided) -> combine(decided, errors))
			.doOnDiscard(RateLimitDecision.class, (unseen) -> Acquired.giveBackAll(unseen, errors));
	}

	private RateLimitDecision combine(List<RateLimitDecision> decided, ErrorCounts errors) {
		boolean admitted = decided.stream().allMatch(Acquired::admitsAll);
		Throwable failure = decided.stream().flatMap((decision) -> decision.failure().stream()).findFirst()
			.orElse(null);
		if (!admitted) {
			List<RateLimitDecision> reported = new ArrayList<>(decided.size());
			for (RateLimitDecision decision : decided) {
				if (Acquired.admitsAll(decision)) {
					Acquired.giveBackAll(decision, errors);
					reported.add(decision.reversed());
				}
				else {
					reported.add(decision);
				}
			}
			List<PolicyDecision> all = inRequestOrder(reported, false);
			return RateLimitDecision.withoutPermits(all, failure);
		}
		Permit permit = Permit.NONE;
		Permit reversal = Permit.NONE;
		for (RateLimitDecision decision : decided) {
			permit = PermitPair.of(permit, decision.permit());
			reversal = PermitPair.of(reversal, decision.reversal());
		}
		return new RateLimitDecision(inRequestOrder(decided, false), permit, reversal,
				() -> inRequestOrder(decided, true), failure);
	}

	/** The parts' decisions (or their reversed figures) at their entries' places in the request. */
	private List<PolicyDecision> inRequestOrder(List<RateLimitDecision> decided, boolean reversed) {
		PolicyDecision[] all = new PolicyDecision[this.request.entries().size()];
		for (int p = 0; p < decided.size(); p++) {
			RateLimitDecision decision = reversed ? decided.get(p).reversed() : decided.get(p);
			List<PolicyDecision> own = decision.allDecisions();
			List<Integer> places = this.positions.get(p);
			for (int j = 0; j < places.size(); j++) {
				all[places.get(j)] = own.get(j);
			}
		}
		return List.of(all);
	}

}
