package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import org.jspecify.annotations.Nullable;

/**
 * A bounded, thread-safe cache of the backend's denials: an identity the backend denied until {@code T} is denied
 * again until then without a call, its figures counted down. Only denials whose figures cannot change before
 * {@code T} are kept; quota given back elsewhere is seen only at {@code T}, hence opt-in
 * ({@link DefaultRateLimiter.Builder#denialCache}; docs/configuration.md, "Local denial cache").
 */
public final class RateLimitDenialCache {

	/** The default bound on cached denials. */
	public static final long DEFAULT_MAXIMUM_SIZE = 10_000;

	/** At most this many costs are kept for one policy and identity. */
	private static final int COSTS_KEPT = 4;

	private final Cache<Key, Denials> denials;

	/** Moves on before every invalidation, so that an answer to a call sent before it is not cached after it. */
	private final AtomicLong epoch = new AtomicLong();

	private final LongAdder hits = new LongAdder();

	private RateLimitDenialCache(long maximumSize) {
		this.denials = Caffeine.newBuilder()
			.executor(CacheUpkeep.EXECUTOR)
			.maximumSize(maximumSize)
			.expireAfter(Expiry.writing(
					(Key key, Denials kept) -> Duration.ofNanos(Math.max(0, kept.expiresAtNanos() - System.nanoTime()))))
			.build();
	}

	/** {@return a cache of at most {@link #DEFAULT_MAXIMUM_SIZE} denials} */
	public static RateLimitDenialCache create() {
		return create(DEFAULT_MAXIMUM_SIZE);
	}

	/**
	 * {@return a cache of at most {@code maximumSize} denials (policy and identity pairs)}
	 * @throws IllegalArgumentException when the size is not positive
	 */
	public static RateLimitDenialCache create(long maximumSize) {
		if (maximumSize < 1) {
			throw new IllegalArgumentException("The maximum size of the denial cache must be positive but was "
					+ maximumSize);
		}
		return new RateLimitDenialCache(maximumSize);
	}

	/** Forgets every cached denial: for a reset of everything, or a change of every policy. */
	public void invalidateAll() {
		this.epoch.incrementAndGet();
		this.denials.invalidateAll();
	}

	/** Forgets the cached denials of the named policy, whatever the identity: for a reset or a change of it. */
	public void invalidatePolicy(String policy) {
		invalidateMatching((key) -> key.policy.equals(policy));
	}

	/** Forgets the cached denials of an identity (as requests name it), whatever the policy: for its reset. */
	public void invalidateIdentity(String identity) {
		invalidateMatching((key) -> key.identity.equals(identity));
	}

	/** Forgets the cached denials of one identity of the named policy: for a reset of it. */
	public void invalidate(String policy, String identity) {
		this.epoch.incrementAndGet();
		this.denials.invalidate(new Key(policy, identity));
	}

	private void invalidateMatching(Predicate<Key> matching) {
		this.epoch.incrementAndGet();
		this.denials.asMap().keySet().removeIf(matching);
	}

	/** {@return how many policy and identity pairs have a denial cached (an estimate: expired ones may count)} */
	public long size() {
		return this.denials.estimatedSize();
	}

	/** {@return how many requests were denied from this cache, without a backend call, since it was made} */
	public long hitCount() {
		return this.hits.sum();
	}

	/** The current epoch: read before a backend call is sent, handed back to {@link #record}. */
	long epoch() {
		return this.epoch.get();
	}

	/** The decision of a request that a cached denial answers, or null when the backend must decide. */
	@Nullable RateLimitDecision lookup(RateLimitRequest request) {
		if (this.denials.estimatedSize() == 0) {
			return null;
		}
		boolean explicit = request.hasExplicitTime();
		long now = explicit ? request.explicitTimeMicros() : System.nanoTime();
		List<PolicyDecision> hits = null;
		for (RateLimitRequest.Entry entry : request.entries()) {
			if (!cacheable(entry.policy())) {
				continue;
			}
			Denials cached = this.denials.getIfPresent(new Key(entry.policy().name(), entry.identity()));
			if (cached == null || !sameLimits(cached.policy, entry.policy())) {
				continue;
			}
			Denial denial = cached.answering(entry, explicit, now);
			if (denial != null) {
				if (hits == null) {
					hits = new ArrayList<>(request.entries().size());
				}
				hits.add(denial.decision(entry, now));
			}
		}
		if (hits == null) {
			return null;
		}
		this.hits.increment();
		return new RateLimitDecision(hits, Permit.NONE);
	}

	/**
	 * Learns from the backend's answer, sent at {@code sentNanos} after reading {@code epoch}: cacheable denials are
	 * kept, an admission forgets its entries' denials, or keeps the denial its {@code exhaustedForMicros} tells.
	 */
	void record(RateLimitRequest request, List<PolicyDecision> decisions, long exhaustedForMicros, long sentNanos,
			long epoch) {
		List<RateLimitRequest.Entry> entries = request.entries();
		boolean admitted = decisions.stream().allMatch(PolicyDecision::allowed);
		if (admitted && exhaustedForMicros > 0 && entries.size() == 1) {
			recordExhausted(request, decisions.get(0), exhaustedForMicros, sentNanos, epoch);
			return;
		}
		if (admitted && this.denials.estimatedSize() == 0) {
			return; // nothing to forget: the common case costs no lookup
		}
		for (int i = 0; i < entries.size(); i++) {
			RateLimitRequest.Entry entry = entries.get(i);
			if (!cacheable(entry.policy())) {
				continue;
			}
			Key key = new Key(entry.policy().name(), entry.identity());
			if (admitted) {
				this.denials.invalidate(key);
				continue;
			}
			Denials kept = this.denials.getIfPresent(key);
			if (kept != null && !sameLimits(kept.policy, entry.policy())) {
				// a call under other limits may have rewritten the state (a sliding window counter's changed window):
				// what was kept under the old ones no longer holds
				this.denials.invalidate(key);
			}
			PolicyDecision decision = decisions.get(i);
			if (decision.allowed() || decision.enforcement() != Enforcement.ENFORCED
					|| !figuresHoldUntilRetry(entry, decision) || this.epoch.get() != epoch) {
				continue;
			}
			keep(key, entry.policy(), Denial.of(entry, decision, request, sentNanos), false, epoch);
		}
	}

	/** Keeps the denial a request of cost 1 gets right after an admission that left no room for it. */
	private void recordExhausted(RateLimitRequest request, PolicyDecision admission, long exhaustedForMicros,
			long sentNanos, long epoch) {
		RateLimitRequest.Entry entry = request.entries().get(0);
		if (!cacheable(entry.policy()) || admission.enforcement() != Enforcement.ENFORCED
				|| this.epoch.get() != epoch) {
			return;
		}
		RateLimitRequest.Entry next = new RateLimitRequest.Entry(entry.policy(), entry.identity(), 1);
		PolicyDecision denied = new PolicyDecision(entry.policy(), entry.identity(), false, 0, admission.resetAfter(),
				Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(exhaustedForMicros)), Enforcement.ENFORCED);
		// what was kept for this identity said less than this admission knows: start from it alone
		keep(new Key(entry.policy().name(), entry.identity()), entry.policy(),
				Denial.of(next, denied, request, sentNanos), true, epoch);
	}

	private void keep(Key key, RateLimitPolicy policy, @Nullable Denial denial, boolean alone, long epoch) {
		if (denial == null) {
			return;
		}
		this.denials.asMap().compute(key, (k, cached) -> Denials.with(alone ? null : cached, policy, denial));
		if (this.epoch.get() != epoch) {
			// invalidated while this was being put: whatever it was, it may have been about this identity
			this.denials.invalidate(key);
		}
	}

	/** Forgets the denials of entries whose cost was given back (a reversal, a late answer undone). */
	void forget(List<RateLimitRequest.Entry> entries) {
		boolean any = false;
		for (RateLimitRequest.Entry entry : entries) {
			if (cacheable(entry.policy())) {
				if (!any) {
					this.epoch.incrementAndGet();
					any = true;
				}
				this.denials.invalidate(new Key(entry.policy().name(), entry.identity()));
			}
		}
	}

	/** Concurrency permits come back whenever their holders finish: a denial says nothing about the next moment. */
	static boolean cacheable(RateLimitPolicy policy) {
		return !policy.algorithm().holdsPermits();
	}

	/**
	 * Whether nothing a denial reports can change before its retry-after while time alone passes: it reports
	 * {@code cost - 1} remaining already, or it is a fixed window's.
	 */
	private static boolean figuresHoldUntilRetry(RateLimitRequest.Entry entry, PolicyDecision decision) {
		RateLimitPolicy policy = entry.policy();
		if (policy.algorithm() == Algorithm.FIXED_WINDOW) {
			return true;
		}
		if (decision.remaining() != entry.cost() - 1) {
			return false;
		}
		// a sliding window log's minimum interval may outlast the wait for quota, which then comes back before the
		// end: the interval ends at the newest entry's time plus the interval, reset-after less the window plus the
		// interval; a denial that ends later waits for quota
		return policy.algorithm() != Algorithm.SLIDING_WINDOW_LOG || policy.minIntervalMicros() == 0
				|| RateLimitPolicy.toMicros(decision.retryAfter()) > RateLimitPolicy.toMicros(decision.resetAfter())
						- policy.windowMicros() + policy.minIntervalMicros();
	}

	/** Whether two policies of one name decide alike: the same algorithm and limits (not cost, mode or shadow). */
	private static boolean sameLimits(RateLimitPolicy cached, RateLimitPolicy requested) {
		return cached == requested || (cached.algorithm() == requested.algorithm()
				&& cached.limit() == requested.limit() && cached.burst() == requested.burst()
				&& cached.window().equals(requested.window()) && cached.minInterval().equals(requested.minInterval()));
	}

	private record Key(String policy, String identity) {
	}

	/** One denial of a cost until {@code T}, on the request's explicit clock (µs) or the monotonic one (ns). */
	private record Denial(long cost, boolean explicit, long from, long until, long resetAt, long remaining,
			long expiresAtNanos) {

		static @Nullable Denial of(RateLimitRequest.Entry entry, PolicyDecision decision, RateLimitRequest request,
				long sentNanos) {
			long retryMicros = RateLimitPolicy.toMicros(decision.retryAfter());
			long resetMicros = RateLimitPolicy.toMicros(decision.resetAfter());
			if (retryMicros <= 0) {
				return null;
			}
			long expiresAtNanos = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(retryMicros);
			if (request.hasExplicitTime()) {
				long from = request.explicitTimeMicros();
				return new Denial(entry.cost(), true, from, from + retryMicros, from + resetMicros,
						decision.remaining(), expiresAtNanos);
			}
			long until = sentNanos + TimeUnit.MICROSECONDS.toNanos(retryMicros);
			if (until - System.nanoTime() <= 0) {
				return null;
			}
			return new Denial(entry.cost(), false, sentNanos, until,
					sentNanos + TimeUnit.MICROSECONDS.toNanos(resetMicros), decision.remaining(), until);
		}

		/**
		 * Whether this denial answers that entry now: the same cost (a fixed window's any larger one too), until a
		 * microsecond before its end (the backend's rounding).
		 */
		boolean answers(RateLimitRequest.Entry entry, boolean explicit, long now) {
			long margin = explicit ? 1 : 1_000;
			if (this.explicit != explicit || now - this.from < 0 || this.until - margin - now <= 0) {
				return false;
			}
			return this.cost == entry.cost()
					|| (this.cost < entry.cost() && entry.policy().algorithm() == Algorithm.FIXED_WINDOW);
		}

		PolicyDecision decision(RateLimitRequest.Entry entry, long now) {
			TimeUnit unit = this.explicit ? TimeUnit.MICROSECONDS : TimeUnit.NANOSECONDS;
			Duration retryAfter = Duration.ofNanos(unit.toNanos(this.until - now));
			Duration resetAfter = Duration.ofNanos(unit.toNanos(Math.max(0, this.resetAt - now)));
			return new PolicyDecision(entry.policy(), entry.identity(), false, this.remaining, resetAfter, retryAfter,
					Enforcement.ENFORCED);
		}

		boolean live(long nowNanos) {
			return this.expiresAtNanos - nowNanos > 0;
		}

	}

	/** The denials of one policy and identity, one per cost, under the policy's limits they were made with. */
	private record Denials(RateLimitPolicy policy, List<Denial> byCost) {

		static Denials with(@Nullable Denials cached, RateLimitPolicy policy, Denial denial) {
			List<Denial> kept = new ArrayList<>(COSTS_KEPT);
			if (cached != null && sameLimits(cached.policy, policy)) {
				long now = System.nanoTime();
				for (Denial other : cached.byCost) {
					if (other.cost != denial.cost && other.live(now) && kept.size() < COSTS_KEPT - 1) {
						kept.add(other);
					}
				}
			}
			kept.add(denial);
			return new Denials(policy, List.copyOf(kept));
		}

		@Nullable Denial answering(RateLimitRequest.Entry entry, boolean explicit, long now) {
			for (Denial denial : this.byCost) {
				if (denial.answers(entry, explicit, now)) {
					return denial;
				}
			}
			return null;
		}

		long expiresAtNanos() {
			long latest = this.byCost.get(0).expiresAtNanos;
			for (Denial denial : this.byCost) {
				latest = (denial.expiresAtNanos - latest > 0) ? denial.expiresAtNanos : latest;
			}
			return latest;
		}

	}

}
