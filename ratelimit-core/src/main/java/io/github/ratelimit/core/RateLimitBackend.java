package io.github.ratelimit.core;

import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Where the counters live: Redis (shared by all instances) or local memory. A request's entries are one unit: every
 * entry admits and takes its cost, or none takes anything. {@link #acquire} and {@link #release} never block, with
 * one exception: they may block a subscriber for which {@link Waits#waitsHere} is true, the thread that waits for
 * the answer in {@link Waits#await} anyway (the local backend waits there for a contended key's lock); such a wait
 * must end when that thread is interrupted. The operators' calls ({@link #inspect}, {@link #reset},
 * {@link #resetMatching}) block, never on a request path.
 */
public interface RateLimitBackend {

	/**
	 * Evaluates and, when every entry admits, takes the cost of each entry, without blocking the caller (unless it
	 * is the thread waiting for the answer: {@link Waits#waitsHere}). An answer already there when the returned
	 * {@code Mono} is subscribed is taken as made from memory: a guarded limiter's circuit breaker does not count it
	 * as Redis' (see {@link #probe}).
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request, which its release passes back
	 * @return one decision per entry, in the request's order, and the time of the evaluation
	 */
	Mono<Acquisition> acquire(RateLimitRequest request, String requestId);

	/**
	 * {@link #acquire Acquires} now, on the calling thread, when this backend can answer from its own memory without
	 * waiting (a leased slice that holds the cost); otherwise takes nothing and answers null, and the caller goes
	 * through {@link #acquire}. Such an answer asks no remote service and waits for nothing: a guarded limiter asks
	 * for one while the request's circuit is closed, without a budget (architecture.md, "Answers made at once").
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request, which its release passes back
	 * @return the acquisition, or null when only {@link #acquire} can answer
	 */
	default @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
		return null;
	}

	/**
	 * {@return whether {@link #acquireAtOnce} may answer this request} A cheap test, asked before anything else is
	 * done for an answer at once, so that a request only {@link #acquire} can answer pays nothing for it; true does
	 * not promise an answer (a slice may not hold the cost).
	 * @param request the entries and the optional explicit time
	 */
	default boolean answersAtOnce(RateLimitRequest request) {
		return false;
	}

	/**
	 * Reaches the store that decides this request's entries, deciding nothing: how a circuit breaker probing it
	 * learns whether it answers when {@link #acquire} answered the request from memory (a leased slice's spend asks
	 * nothing of Redis). Completes empty once the store answered, with an error when it did not. The default, for a
	 * backend with nothing remote, completes at once. A backend wrapping another must pass it on: else a half-open
	 * breaker hears a success for each answer from memory, and leased requests alone close it while Redis is down.
	 * @param request the request whose store is reached (on a Cluster, its first entry's master)
	 * @return completes once the store answered
	 */
	default Mono<Void> probe(RateLimitRequest request) {
		return Mono.empty();
	}

	/**
	 * Gives back what {@link #acquire} took for these entries: concurrency permits when a request completes,
	 * everything when an admitted request is undone. Each cost goes back at most once, to the window it was counted
	 * in, and never more than the request still holds (architecture.md, "Refunds").
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param acquiredAtMicros for each entry, {@link Acquisition#entryTimesMicros()}
	 * @param sequences for each entry, {@link Acquisition#entrySequences()}
	 * @return completes once released
	 */
	Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences);

	/**
	 * What a request of each entry's cost would get now, taking nothing (expired state may be dropped, as a check
	 * does). For operators' tools, not decisions: another instance may take the quota a moment later.
	 * @param request the entries and the optional explicit time
	 * @return one decision per entry, in the request's order
	 * @throws UnsupportedOperationException when the backend cannot read without taking
	 */
	default List<PolicyDecision> inspect(RateLimitRequest request) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot inspect state without taking");
	}

	/**
	 * Forgets the state of these entries' keys: each identity starts afresh; held concurrency permits are forgotten
	 * (their releases then give nothing).
	 * @throws UnsupportedOperationException when the backend cannot reset state
	 */
	default void reset(List<RateLimitRequest.Entry> entries) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot reset state");
	}

	/**
	 * Forgets the state of every identity of a policy, of every policy of an identity, or of everything, whatever
	 * the algorithm, tier or override (runtime overrides are not state and stay). It walks the keyspace (Redis
	 * {@code SCAN}, on every Cluster master): no call for a request path.
	 * @param policyName the policy, or null for every policy
	 * @param identity the raw identity, or null for every identity
	 * @return how many keys were removed
	 * @throws UnsupportedOperationException when the backend cannot list its state
	 */
	default long resetMatching(@Nullable String policyName, @Nullable String identity) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot list its state");
	}

	/** {@return the observations' {@code backend} value: {@code redis}, {@code local}, {@code custom}; no address} */
	default String kind() {
		return "custom";
	}

	/**
	 * The server an entry's state lives on (on Redis Cluster the master of its slot), for a guarded limiter's breaker
	 * per shard. Called on every guarded decision, from any thread: it answers from memory, never over the network.
	 * @return the shard's name (an address), or null when every entry goes to the same server or it is not known
	 */
	default @Nullable String shard(RateLimitRequest.Entry entry) {
		return null;
	}

	/**
	 * {@return the shards entries go to now, empty when not sharded}: a limiter forgets the breakers of the others (a
	 * failed-over master). Asked only when an entry goes to a shard not seen before.
	 */
	default Set<String> shards() {
		return Set.of();
	}

	/**
	 * What an acquisition decided, and when (on Redis Cluster each slot's server on its own clock).
	 *
	 * @param decisions one decision per entry, in the request's order
	 * @param timeMicros the time of the evaluation in microseconds since the epoch (the first entry's)
	 * @param entryTimesMicros for each entry, the time its evaluation used
	 * @param entrySequences for each entry, the first of the {@code cost} sequence numbers it took
	 * ({@link Algorithm#keepsEntries()}), which its release passes back; 0 when it took none
	 * @param failedGiveBacks how many Cluster slots that admitted a request another slot denied could not be given
	 * back: their quota stays taken until it refills or expires
	 * @param exhaustedForMicros for an admitted request of one entry that left no room for a request of cost 1, the
	 * retry-after that request would get right after it (for a denial cache); 0 when unknown or it would be admitted
	 */
	record Acquisition(List<PolicyDecision> decisions, long timeMicros, List<Long> entryTimesMicros,
			List<Long> entrySequences, int failedGiveBacks, long exhaustedForMicros) {

		public Acquisition {
			decisions = List.copyOf(decisions);
			entryTimesMicros = List.copyOf(entryTimesMicros);
			entrySequences = List.copyOf(entrySequences);
			if (entryTimesMicros.size() != decisions.size() || entrySequences.size() != decisions.size()) {
				throw new IllegalArgumentException("One time and one sequence per decision expected but got "
						+ entryTimesMicros.size() + " and " + entrySequences.size() + " for " + decisions.size());
			}
		}

		/** An acquisition that gave back all it had to, and says nothing of exhaustion. */
		public Acquisition(List<PolicyDecision> decisions, long timeMicros, List<Long> entryTimesMicros,
				List<Long> entrySequences) {
			this(decisions, timeMicros, entryTimesMicros, entrySequences, 0, 0);
		}

		/** An acquisition whose entries were all evaluated at one time and took no sequence numbers. */
		public Acquisition(List<PolicyDecision> decisions, long timeMicros) {
			this(decisions, timeMicros, Collections.nCopies(decisions.size(), timeMicros),
					Collections.nCopies(decisions.size(), 0L));
		}

		/** {@return this acquisition, reporting {@code failed} more give-backs that failed} */
		public Acquisition withFailedGiveBacks(int failed) {
			return (failed == 0) ? this
					: new Acquisition(this.decisions, this.timeMicros, this.entryTimesMicros, this.entrySequences,
							this.failedGiveBacks + failed, this.exhaustedForMicros);
		}

	}

}
