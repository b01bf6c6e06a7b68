package io.github.ratelimit.core;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A backend whose answers (late ones included) teach a {@link RateLimitDenialCache} and whose give-backs make it
 * forget, and the layer that answers from that cache before the guard ({@link #answeringFirst}): architecture.md,
 * "The composition".
 */
record DenialCachingBackend(RateLimitBackend backend, RateLimitDenialCache cache) implements RateLimitBackend {

	/** The layer that denies a request whose denial the cache holds, else asks the next layer. */
	static Decider answeringFirst(RateLimitDenialCache cache, Decider next) {
		return new Decider() {

			@Override
			public Mono<RateLimitDecision> decide(RateLimitRequest request) {
				return Mono.defer(() -> {
					RateLimitDecision cached = cache.lookup(request);
					return (cached != null) ? Mono.just(cached) : next.decide(request);
				});
			}

			@Override
			public @Nullable RateLimitDecision decideAtOnce(RateLimitRequest request) {
				RateLimitDecision cached = cache.lookup(request);
				return (cached != null) ? cached : next.decideAtOnce(request);
			}

		};
	}

	/** Learns from the answer; the epoch and the time are read as the call is sent. */
	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		return Mono.defer(() -> {
			long epoch = this.cache.epoch();
			long sent = System.nanoTime();
			return this.backend.acquire(request, requestId)
				.map((acquisition) -> learned(request, acquisition, sent, epoch));
		});
	}

	@Override
	public @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
		long epoch = this.cache.epoch();
		long sent = System.nanoTime();
		Acquisition acquisition = this.backend.acquireAtOnce(request, requestId);
		return (acquisition != null) ? learned(request, acquisition, sent, epoch) : null;
	}

	@Override
	public boolean answersAtOnce(RateLimitRequest request) {
		return this.backend.answersAtOnce(request);
	}

	@Override
	public Mono<Void> probe(RateLimitRequest request) {
		return this.backend.probe(request);
	}

	private Acquisition learned(RateLimitRequest request, Acquisition acquisition, long sentNanos, long epoch) {
		this.cache.record(request, acquisition.decisions(), acquisition.exhaustedForMicros(), sentNanos, epoch);
		return acquisition;
	}

	/** Forgets the entries' cached denials once the release is over, whatever its outcome, before passing it on. */
	@Override
	public Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		return this.backend.release(entries, requestId, acquiredAtMicros, sequences)
			.doOnTerminate(() -> this.cache.forget(entries))
			.doOnCancel(() -> this.cache.forget(entries));
	}

	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		return this.backend.inspect(request);
	}

	@Override
	public void reset(List<RateLimitRequest.Entry> entries) {
		this.backend.reset(entries);
	}

	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		return this.backend.resetMatching(policyName, identity);
	}

	@Override
	public String kind() {
		return this.backend.kind();
	}

	@Override
	public @Nullable String shard(RateLimitRequest.Entry entry) {
		return this.backend.shard(entry);
	}

	@Override
	public Set<String> shards() {
		return this.backend.shards();
	}

}
