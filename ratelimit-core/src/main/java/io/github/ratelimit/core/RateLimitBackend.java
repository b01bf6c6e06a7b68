package io.github.ratelimit.core;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * Where the counters live: Redis (shared by all instances) or local memory. A backend evaluates all entries of a
 * request as one unit: either every entry admits and every entry takes its cost, or none takes anything.
 */
public interface RateLimitBackend {

	/**
	 * Evaluates and, when every entry admits, takes the cost of each entry.
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request, naming what it takes (log entries, concurrency permits)
	 * @return one decision per entry, in the request's order, and the time of the evaluation
	 */
	Acquisition acquire(RateLimitRequest request, String requestId);

	/**
	 * The non-blocking form of {@link #acquire}.
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request
	 * @return one decision per entry and the time of the evaluation
	 */
	Mono<Acquisition> acquireAsync(RateLimitRequest request, String requestId);

	/**
	 * Gives back what {@link #acquire} took for these entries under this request id: concurrency permits when a
	 * request completes, and everything when an admitted request must be undone. Counts go back to the window the
	 * request was counted in, never to a later one.
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param acquiredAtMicros the time the acquisition returned
	 */
	void release(List<RateLimitRequest.Entry> entries, String requestId, long acquiredAtMicros);

	/**
	 * The non-blocking form of {@link #release}.
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param acquiredAtMicros the time the acquisition returned
	 * @return completes once released
	 */
	Mono<Void> releaseAsync(List<RateLimitRequest.Entry> entries, String requestId, long acquiredAtMicros);

	/**
	 * What an acquisition decided, and when (the backend's time, or the request's explicit time).
	 *
	 * @param decisions one decision per entry, in the request's order
	 * @param timeMicros the time of the evaluation in microseconds since the epoch
	 */
	record Acquisition(List<PolicyDecision> decisions, long timeMicros) {

		public Acquisition {
			decisions = List.copyOf(decisions);
		}

	}

}
