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
 * A bounded, in-memory cache of the backend's denials, so that an identity the backend denied until a time {@code T}
 * is denied again until {@code T} without asking the backend: a hot identity (an abusive client, a retry storm) then
 * costs the backend one call per {@code T}, not one per request. Given to a limiter with
 * {@link DefaultRateLimiter.Builder#denialCache(RateLimitDenialCache)}.
 * <p>
 * <strong>What is cached.</strong> Only denials the backend made ({@link Enforcement#ENFORCED}), and an admission
 * of a single-entry request that the backend says took the last of the quota
 * ({@link RateLimitBackend.Acquisition#exhaustedForMicros()}), kept as the denial a request of cost 1 would get right
 * after it; never a decision of a failure mode, never a {@link Algorithm#CONCURRENCY concurrency} policy (its
 * permits come back at any time), and only denials whose figures cannot change before {@code T} while time alone
 * passes: those that report the most a denial of their cost can have remaining ({@code cost - 1}: every denial of
 * cost 1 but a sliding window log's minimum-interval denial while quota is left), unless a sliding window log's
 * minimum interval outlasts the wait for quota (which then comes back before it ends), and every fixed-window
 * denial.
 * A denial is kept under its policy's name, the identity and the cost, with the policy's decision parameters
 * (algorithm, limit, window, burst, minimum interval): a request under other parameters (an override, a tier) or of
 * another cost is not answered from it (a fixed-window denial also answers larger costs: its figures are the same),
 * and the backend's denial of such a request forgets it (the call may have rewritten the state under its parameters,
 * as a sliding window counter does for a changed window).
 * <p>
 * <strong>What an answer says.</strong> The cached request's figures, counted down: the same limit and remaining,
 * the reset-after and the retry-after less the time since the denying call was sent, so {@code Retry-After} still
 * points at {@code T}. Those are the figures the backend itself would give at that time if nothing else had
 * happened to the identity, for every algorithm, to the backend's rounding of a microsecond; on the backend's clock
 * the wait counts from when the call was sent, so it can end earlier than the backend's by the call's latency (a
 * retry then reaches the backend, which decides). A request of several policies is denied from the cache when any
 * of its policies' denial is cached: it reports the cached denials only, since nothing was asked of its other
 * policies (nothing is invented for them, as a policy that failed open reports nothing either); a backend call would
 * have taken nothing from them, since it takes all of a request or nothing. Shadow policies are cached like the
 * others and never refuse: their denials are kept apart by {@link RateLimitDecision}.
 * <p>
 * <strong>Why it is not exact in every case</strong>, and so not on by default in the starter: it never admits
 * (it only denies), and what it denies the backend would deny too <em>while only requests take quota</em>. Quota
 * given back or removed elsewhere is seen only at {@code T}: a reversal or refund made by another instance (this
 * limiter's own give-backs forget the identity at once), a reset or a policy change the application does not tell
 * the cache about ({@link #invalidate(String, String)}, {@link #invalidatePolicy(String)},
 * {@link #invalidateAll()}; the Spring integration does this on every instance for the endpoint's resets and
 * runtime overrides), and another instance taking under other limits (a configuration rolled out instance by
 * instance) whose state reads as more room under these. Requests of the same identity through other instances
 * make the true wait longer than the cached one, as they would make the backend's own earlier answer.
 * <p>
 * At most {@code maximumSize} identities and policies are kept (Caffeine's eviction beyond); each is dropped at its
 * {@code T}. Thread-safe.
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
		this.denials = Caffeine.newBuilder().maximumSize(maximumSize).expireAfter(new UntilLastDenialEnds()).build();
	}

	/**
	 * A cache of at most {@link #DEFAULT_MAXIMUM_SIZE} denials.
	 * @return the cache
	 */
	public static RateLimitDenialCache create() {
		return create(DEFAULT_MAXIMUM_SIZE);
	}

	/**
	 * A cache of at most {@code maximumSize} denials (policy and identity pairs).
	 * @param maximumSize the bound, positive
	 * @return the cache
	 */
	public static RateLimitDenialCache create(long maximumSize) {
		if (maximumSize < 1) {
			throw new IllegalArgumentException("The maximum size of the denial cache must be positive but was "
					+ maximumSize);
		}
		return new RateLimitDenialCache(maximumSize);
	}

	/**
	 * Forgets every cached denial: for a reset of everything, or a change of every policy.
	 */
	public void invalidateAll() {
		this.epoch.incrementAndGet();
		this.denials.invalidateAll();
	}

	/**
	 * Forgets the cached denials of a policy, whatever the identity: for a reset or a change of the policy.
	 * @param policy the policy's name
	 */
	public void invalidatePolicy(String policy) {
		invalidateMatching((key) -> key.policy.equals(policy));
	}

	/**
	 * Forgets the cached denials of an identity, whatever the policy: for a reset of the identity.
	 * @param identity the identity, as requests name it
	 */
	public void invalidateIdentity(String identity) {
		invalidateMatching((key) -> key.identity.equals(identity));
	}

	/**
	 * Forgets the cached denials of one identity of one policy: for a reset of it.
	 * @param policy the policy's name
	 * @param identity the identity, as requests name it
	 */
	public void invalidate(String policy, String identity) {
		this.epoch.incrementAndGet();
		this.denials.invalidate(new Key(policy, identity));
	}

	private void invalidateMatching(Predicate<Key> matching) {
		this.epoch.incrementAndGet();
		this.denials.asMap().keySet().removeIf(matching);
	}

	/**
	 * How many policy and identity pairs have a denial cached (an estimate: expired ones may still be counted).
	 * @return the size
	 */
	public long size() {
		return this.denials.estimatedSize();
	}

	/**
	 * How many requests were denied from this cache, without a backend call, since it was made.
	 * @return the hits
	 */
	public long hitCount() {
		return this.hits.sum();
	}

	/**
	 * The current epoch: read before a backend call is sent, handed back to {@link #record}.
	 * @return the epoch
	 */
	long epoch() {
		return this.epoch.get();
	}

	/**
	 * The decision of a request that a cached denial answers, or null when the backend must decide.
	 * @param request the request
	 * @return the denial from the cache, or null
	 */
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
	 * Learns from the backend's answer to a request: its cacheable denials are kept, and an admission forgets the
	 * denials of what it took (their figures no longer hold). An admission of one entry that took the last of the
	 * quota, as the backend says ({@code exhaustedForMicros}), is kept as the denial a request of cost 1 would get
	 * right after it: so a hot identity's next requests are answered here from its admission on, not from its first
	 * denial on.
	 * @param request the request
	 * @param decisions the backend's decisions, one per entry
	 * @param exhaustedForMicros for an admitted request of one entry, the retry-after a request of cost 1 would get
	 * right after it, or 0 (see {@link RateLimitBackend.Acquisition#exhaustedForMicros()})
	 * @param sentNanos when the call was sent ({@link System#nanoTime()}), unused for a request at an explicit time
	 * @param epoch the {@link #epoch()} read before the call was sent
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
			Denial denial = Denial.of(entry, decision, request, sentNanos);
			if (denial == null) {
				continue;
			}
			this.denials.asMap().compute(key, (k, cached) -> Denials.with(cached, entry.policy(), denial));
			if (this.epoch.get() != epoch) {
				// invalidated while this was being put: whatever it was, it may have been about this identity
				this.denials.invalidate(key);
			}
		}
	}

	/**
	 * Keeps what an admission that took the last of the quota means for a request of cost 1 right after it: denied,
	 * nothing remaining, the admission's reset-after, and the retry-after the backend said; the same figures the
	 * backend would give (its waits count down from there while time alone passes).
	 */
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
		Denial denial = Denial.of(next, denied, request, sentNanos);
		if (denial == null) {
			return;
		}
		Key key = new Key(entry.policy().name(), entry.identity());
		// what was kept for this identity said less than this admission knows: start from it alone
		this.denials.asMap().compute(key, (k, cached) -> Denials.with(null, entry.policy(), denial));
		if (this.epoch.get() != epoch) {
			this.denials.invalidate(key);
		}
	}

	/**
	 * Forgets the denials of entries whose cost was given back (a reversal, a late answer undone): the backend now
	 * has more room than they say.
	 * @param entries the entries given back
	 */
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
	 * Whether nothing a denial reports can change before its retry-after while time alone passes. While denied at a
	 * cost, the remaining quota can only grow towards {@code cost - 1}: a denial that reports that already keeps
	 * all its figures (its waits count down). A fixed window's count stays as it is until the window ends.
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
				|| micros(decision.retryAfter()) > micros(decision.resetAfter()) - policy.windowMicros()
						+ policy.minIntervalMicros();
	}

	/** Whether two policies of one name decide alike: the same algorithm and limits (not cost, mode or shadow). */
	private static boolean sameLimits(RateLimitPolicy cached, RateLimitPolicy requested) {
		return cached == requested || (cached.algorithm() == requested.algorithm()
				&& cached.limit() == requested.limit() && cached.burst() == requested.burst()
				&& cached.window().equals(requested.window()) && cached.minInterval().equals(requested.minInterval()));
	}

	private static long micros(Duration duration) {
		return duration.getSeconds() * 1_000_000L + duration.getNano() / 1_000L;
	}

	private record Key(String policy, String identity) {
	}

	/**
	 * One denial: of a cost, from a time to its end ({@code T}), on the request's explicit clock (microseconds) or
	 * this JVM's monotonic one (nanoseconds), with the figures it reported.
	 */
	private record Denial(long cost, boolean explicit, long from, long until, long resetAt, long remaining,
			long expiresAtNanos) {

		static @Nullable Denial of(RateLimitRequest.Entry entry, PolicyDecision decision, RateLimitRequest request,
				long sentNanos) {
			long retryMicros = micros(decision.retryAfter());
			long resetMicros = micros(decision.resetAfter());
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
		 * Whether this denial answers a request of that entry at that time: the same cost (a fixed window's for any
		 * larger cost too), from its time until one microsecond before its end, since the backend's own waits are
		 * rounded to a microsecond.
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
			long latest = Long.MIN_VALUE;
			for (Denial denial : this.byCost) {
				latest = (latest == Long.MIN_VALUE || denial.expiresAtNanos - latest > 0) ? denial.expiresAtNanos
						: latest;
			}
			return latest;
		}

	}

	/** Keeps a policy and identity until its last denial ends. */
	private static final class UntilLastDenialEnds implements Expiry<Key, Denials> {

		@Override
		public long expireAfterCreate(Key key, Denials denials, long currentTime) {
			return Math.max(0, denials.expiresAtNanos() - currentTime);
		}

		@Override
		public long expireAfterUpdate(Key key, Denials denials, long currentTime, long currentDuration) {
			return Math.max(0, denials.expiresAtNanos() - currentTime);
		}

		@Override
		public long expireAfterRead(Key key, Denials denials, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
