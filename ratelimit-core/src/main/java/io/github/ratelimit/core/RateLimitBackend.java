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
	 * @return one decision per entry, in the request's order
	 */
	List<PolicyDecision> acquire(RateLimitRequest request, String requestId);

	/**
	 * The non-blocking form of {@link #acquire}.
	 * @param request the entries and the optional explicit time
	 * @param requestId an id unique to this request
	 * @return one decision per entry
	 */
	Mono<List<PolicyDecision>> acquireAsync(RateLimitRequest request, String requestId);

	/**
	 * Gives back what {@link #acquire} took for these entries under this request id (concurrency permits when a
	 * request completes; for the other algorithms a best-effort refund).
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param explicitTimeMicros the explicit time, or -1 for the backend's clock
	 */
	void release(List<RateLimitRequest.Entry> entries, String requestId, long explicitTimeMicros);

	/**
	 * The non-blocking form of {@link #release}.
	 * @param entries the entries to give back
	 * @param requestId the id used when acquiring
	 * @param explicitTimeMicros the explicit time, or -1 for the backend's clock
	 * @return completes once released
	 */
	Mono<Void> releaseAsync(List<RateLimitRequest.Entry> entries, String requestId, long explicitTimeMicros);

}
