package io.github.ratelimit.core;

import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Where the counters live: Redis (shared by all instances) or local memory. A backend evaluates all entries of a
 * request as one unit: either every entry admits and every entry takes its cost, or none takes anything. Decisions
 * ({@link #acquire}, {@link #release}) are non-blocking only; whoever must wait ({@link RateLimiter#check}) waits on
 * them. The operators' calls ({@link #inspect}, {@link #reset}, {@link #resetMatching}) block: they serve the Actuator
 * endpoint and tests, never a request path.
 */
public interface RateLimitBackend {

	/**
	 * Evaluates and, when every entry admits, takes the cost of each entry, without blocking the caller.
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request: the token bucket and GCRA keep it as their last taker, so that
	 * its release gives back exactly (the sorted sets number what they take instead: {@link Acquisition#entrySequences()})
	 * @return one decision per entry, in the request's order, and the time of the evaluation
	 */
	Mono<Acquisition> acquire(RateLimitRequest request, String requestId);

	/**
	 * Gives back what {@link #acquire} took for these entries under this request id: concurrency permits when a
	 * request completes, and everything when an admitted request must be undone. Each entry's cost goes back to
	 * the window it was counted in, never to a later one, and at most once: a release made again (a retry after a
	 * timeout whose first attempt did run) gives nothing more. A token bucket or GCRA entry gets its cost back only
	 * while the request is the last to have taken from that bucket (see {@code docs/architecture.md}); a sliding
	 * window log or concurrency entry gives back the members its acquisition took, named by their first sequence
	 * number, and nothing once they are gone.
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param acquiredAtMicros for each entry, the time its acquisition used ({@link Acquisition#entryTimesMicros()})
	 * @param sequences for each entry, the first sequence number its acquisition took
	 * ({@link Acquisition#entrySequences()})
	 * @return completes once released
	 */
	Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences);

	/**
	 * The state of each entry as it stands, taking nothing: whether a request of the entry's cost would be admitted
	 * now, the remaining quota and reset as they are, and the retry-after of a denial. For operators' tools (the
	 * Actuator endpoint), not for decisions: another instance may take the quota a moment later. Expired parts of the
	 * state may be dropped on the way, as a check does; nothing a decision depends on changes.
	 * @param request the entries (their cost says which request to judge) and the optional explicit time
	 * @return one decision per entry, in the request's order
	 * @throws UnsupportedOperationException when the backend cannot read without taking
	 */
	default List<PolicyDecision> inspect(RateLimitRequest request) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot inspect state without taking");
	}

	/**
	 * Forgets the state of these entries' keys: the next request of each identity starts fresh, as a new one. Held
	 * concurrency permits are forgotten too (their holders' releases then give nothing).
	 * @param entries the policies and identities to reset
	 * @throws UnsupportedOperationException when the backend cannot reset state
	 */
	default void reset(List<RateLimitRequest.Entry> entries) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot reset state");
	}

	/**
	 * Forgets the state of every identity of a policy, of every policy of an identity, or of everything, whatever
	 * the policy's algorithm, tier or override: what tests reset between cases and operators' tools after a
	 * change. It walks the keyspace (Redis {@code SCAN}, on every Cluster master), so it is no call for a request
	 * path. Runtime overrides are not state and stay.
	 * @param policyName the policy, or null for every policy
	 * @param identity the raw identity, or null for every identity
	 * @return how many keys were removed
	 * @throws UnsupportedOperationException when the backend cannot list its state
	 */
	default long resetMatching(@Nullable String policyName, @Nullable String identity) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot list its state");
	}

	/**
	 * The kind of backend, as the {@code backend} key value of the decision observation: {@code redis},
	 * {@code local}, or {@code custom} for any other implementation unless it says otherwise. A low-cardinality
	 * name, never an address.
	 * @return the kind of backend
	 */
	default String kind() {
		return "custom";
	}

	/**
	 * The shard (the server) an entry's state lives on, for a guarded {@link DefaultRateLimiter}, which keeps a
	 * circuit breaker per shard: a shard that fails then opens its own breaker only, and the entries of the others
	 * keep being decided by the backend. On Redis Cluster it is the master serving the entry's hash slot. Called on
	 * every guarded decision, from any thread: it must answer from memory, never over the network.
	 * @param entry the entry
	 * @return the shard's name (an address), or null when every entry goes to the same server or it is not known
	 */
	default @Nullable String shard(RateLimitRequest.Entry entry) {
		return null;
	}

	/**
	 * The shards entries go to now ({@link #shard}), so that a limiter can forget the breakers of shards that are
	 * gone (a failover promoted another master). Asked only when an entry goes to a shard not seen before.
	 * @return the current shards' names, empty when the backend is not sharded
	 */
	default Set<String> shards() {
		return Set.of();
	}

	/**
	 * What an acquisition decided, and when. On Redis Cluster the entries of different hash slots are evaluated by
	 * different servers, each on its own clock, so each entry has its own time.
	 *
	 * @param decisions one decision per entry, in the request's order
	 * @param timeMicros the time of the evaluation in microseconds since the epoch (the first entry's)
	 * @param entryTimesMicros for each entry, the time its evaluation used (the backend's clock, or the request's
	 * explicit time)
	 * @param entrySequences for each entry, the first sequence number it took: the algorithms that keep one entry
	 * per unit of cost ({@link Algorithm#keepsEntries()}) number an acquisition of cost {@code n} with {@code n}
	 * numbers from this one, which its release passes back; 0 when the entry took none (denied, or another algorithm)
	 * @param failedGiveBacks how many parts of a denied request (Redis Cluster slots that admitted while another
	 * denied) could not be given back: their quota stays taken until it refills or expires
	 * @param exhaustedForMicros for an admitted request of one entry that took the last of the quota, the retry-after
	 * a request of cost 1 of the same policy and identity would get right after it (denied, with nothing remaining),
	 * for a local denial cache; 0 when it would be admitted or the backend does not say (Redis says it for the
	 * single-entry requests of every algorithm but concurrency, for the sliding window log only when no minimum
	 * interval outlasts the wait for quota)
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

		/**
		 * An acquisition that had nothing to give back, or gave back all it had to.
		 * @param decisions one decision per entry
		 * @param timeMicros the time of the evaluation (the first entry's)
		 * @param entryTimesMicros for each entry, the time its evaluation used
		 * @param entrySequences for each entry, the first sequence number it took (0 for none)
		 */
		public Acquisition(List<PolicyDecision> decisions, long timeMicros, List<Long> entryTimesMicros,
				List<Long> entrySequences) {
			this(decisions, timeMicros, entryTimesMicros, entrySequences, 0, 0);
		}

		/**
		 * An acquisition whose entries were all evaluated at one time and took no sequence numbers.
		 * @param decisions one decision per entry
		 * @param timeMicros the time of the evaluation
		 */
		public Acquisition(List<PolicyDecision> decisions, long timeMicros) {
			this(decisions, timeMicros, Collections.nCopies(decisions.size(), timeMicros),
					Collections.nCopies(decisions.size(), 0L));
		}

		/**
		 * This acquisition, reporting give-backs that failed.
		 * @param failed how many parts could not be given back
		 * @return the acquisition
		 */
		public Acquisition withFailedGiveBacks(int failed) {
			return (failed == 0) ? this
					: new Acquisition(this.decisions, this.timeMicros, this.entryTimesMicros, this.entrySequences,
							this.failedGiveBacks + failed, this.exhaustedForMicros);
		}

	}

}
