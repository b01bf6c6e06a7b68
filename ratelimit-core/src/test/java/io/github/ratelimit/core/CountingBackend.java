package io.github.ratelimit.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A real backend with its calls counted: a test double around a real {@link RateLimitBackend} (Redis or local), not
 * a stand-in for one. It can be told to fail its acquisitions, as a backend that cannot be reached does.
 */
final class CountingBackend implements RateLimitBackend {

	private final RateLimitBackend delegate;

	private final AtomicInteger acquisitions = new AtomicInteger();

	private final AtomicInteger releases = new AtomicInteger();

	private final AtomicInteger atOnce = new AtomicInteger();

	private volatile @Nullable RuntimeException failure;

	private volatile @Nullable RuntimeException atOnceFailure;

	CountingBackend(RateLimitBackend delegate) {
		this.delegate = delegate;
	}

	/** Acquisitions asked of the backend failed ones included. */
	int acquisitions() {
		return this.acquisitions.get();
	}

	/** Acquisitions the backend answered at once ({@link RateLimitBackend#acquireAtOnce}, not null). */
	int atOnce() {
		return this.atOnce.get();
	}

	/** Releases asked of the backend. */
	int releases() {
		return this.releases.get();
	}

	/**
	 * Makes every acquisition fail with this, or succeed again with null.
	 * @param failure the failure, or null
	 */
	void failWith(@Nullable RuntimeException failure) {
		this.failure = failure;
	}

	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		return Mono.defer(() -> {
			this.acquisitions.incrementAndGet();
			RuntimeException failing = this.failure;
			return (failing != null) ? Mono.error(failing) : this.delegate.acquire(request, requestId);
		});
	}

	/**
	 * Makes every answer at once throw this (a backend whose {@code acquireAtOnce} is broken), or answer again with
	 * null.
	 * @param failure the failure, or null
	 */
	void failAtOnceWith(@Nullable RuntimeException failure) {
		this.atOnceFailure = failure;
	}

	@Override
	public @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
		RuntimeException failing = this.atOnceFailure;
		if (failing != null) {
			throw failing;
		}
		Acquisition acquisition = this.delegate.acquireAtOnce(request, requestId);
		this.atOnce.addAndGet((acquisition != null) ? 1 : 0);
		return acquisition;
	}

	@Override
	public boolean answersAtOnce(RateLimitRequest request) {
		return this.delegate.answersAtOnce(request);
	}

	@Override
	public Mono<Void> probe(RateLimitRequest request) {
		return this.delegate.probe(request);
	}

	@Override
	public Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		return Mono.defer(() -> {
			this.releases.incrementAndGet();
			return this.delegate.release(entries, requestId, acquiredAtMicros, sequences);
		});
	}

	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		return this.delegate.inspect(request);
	}

	@Override
	public void reset(List<RateLimitRequest.Entry> entries) {
		this.delegate.reset(entries);
	}

	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		return this.delegate.resetMatching(policyName, identity);
	}

	@Override
	public String kind() {
		return this.delegate.kind();
	}

	@Override
	public @Nullable String shard(RateLimitRequest.Entry entry) {
		return this.delegate.shard(entry);
	}

	@Override
	public java.util.Set<String> shards() {
		return this.delegate.shards();
	}

}
