package io.github.ratelimit.core.local;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Counters in this instance's memory, with the Redis backend's algorithms and decisions; limits are per instance.
 * A key expires as its Redis twin would, and at most {@code maximumKeys} are kept (an evicted key forgets its counts
 * and permits: size the bound above the active keys). A request's entries are atomic under their keys' striped
 * locks; the non-blocking form only tries them, continuing on a bounded elastic thread under contention.
 */
public final class LocalRateLimitBackend implements RateLimitBackend {

	/** Default bound on the number of keys kept. */
	public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

	private static final int STRIPES = 256;

	/** The request id of inspections, which take nothing under it. */
	private static final String INSPECTION = "inspect";

	private final LongSupplier clockMicros;

	private final Cache<String, State> states;

	private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

	private final RateLimitKeys keys = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);

	/** A backend on the system clock keeping at most {@value #DEFAULT_MAXIMUM_KEYS} keys. */
	public LocalRateLimitBackend() {
		this(DEFAULT_MAXIMUM_KEYS, systemClock());
	}

	/**
	 * A backend.
	 * @param maximumKeys the most keys kept
	 * @param clockMicros the clock, in microseconds since the epoch; also drives key expiry
	 */
	public LocalRateLimitBackend(long maximumKeys, LongSupplier clockMicros) {
		if (maximumKeys < 1) {
			throw new IllegalArgumentException("maximumKeys must be positive but was " + maximumKeys);
		}
		this.clockMicros = clockMicros;
		this.states = Caffeine.newBuilder()
			.maximumSize(maximumKeys)
			.ticker(() -> clockMicros.getAsLong() * 1_000L)
			.expireAfter(new TtlExpiry())
			.build();
		for (int i = 0; i < STRIPES; i++) {
			this.locks[i] = new ReentrantLock();
		}
	}

	/** @return the wall clock in microseconds since the epoch, as Redis' {@code TIME} gives it */
	public static LongSupplier systemClock() {
		return () -> {
			Instant now = Instant.now();
			return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000L;
		};
	}

	/**
	 * {@inheritDoc}
	 * @return {@code "local"}
	 */
	@Override
	public String kind() {
		return "local";
	}

	/** On the caller's thread when the keys' locks are free at once, else on a bounded elastic thread. */
	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		return Mono.defer(() -> {
			String[] keys = keys(request.entries());
			ReentrantLock[] held = lock(keys, false);
			if (held != null) {
				return Mono.just(acquireLocked(request, requestId, keys, held));
			}
			return Mono.fromSupplier(() -> acquireLocked(request, requestId, keys, waitFor(keys)))
				.subscribeOn(Schedulers.boundedElastic());
		});
	}

	private Acquisition acquireLocked(RateLimitRequest request, String requestId, String[] keys,
			ReentrantLock[] held) {
		List<Entry> entries = request.entries();
		long time = (request.explicitTimeMicros() >= 0) ? request.explicitTimeMicros() : this.clockMicros.getAsLong();
		double now = time;
		boolean explicit = request.hasExplicitTime();
		try {
			LocalAlgorithm[] algorithms = new LocalAlgorithm[entries.size()];
			@Nullable State[] states = new @Nullable State[entries.size()];
			Eval[] evals = new Eval[entries.size()];
			boolean all = true;
			for (int i = 0; i < entries.size(); i++) {
				algorithms[i] = LocalAlgorithms.of(entries.get(i).policy().algorithm());
				states[i] = this.states.getIfPresent(keys[i]);
				evals[i] = new Eval(entries.get(i), now, requestId, explicit);
				algorithms[i].check(evals[i], states[i]);
				if (evals[i].rewritten) {
					this.states.put(keys[i], Objects.requireNonNull(states[i]));
				}
				all &= evals[i].ok;
			}
			List<PolicyDecision> decisions = new ArrayList<>(entries.size());
			List<Long> sequences = new ArrayList<>(entries.size());
			for (int i = 0; i < entries.size(); i++) {
				Eval c = evals[i];
				if (all) {
					this.states.put(keys[i], algorithms[i].commit(c, states[i]));
					decisions.add(PolicyDecision.of(entries.get(i), true, (long) c.ra, (long) c.za, 0));
				}
				else {
					decisions.add(PolicyDecision.of(entries.get(i), c.ok, (long) c.rb, (long) c.zb,
							c.ok ? 0 : (long) c.retry));
				}
				sequences.add(c.seq);
			}
			return new Acquisition(decisions, time, Collections.nCopies(entries.size(), time), sequences);
		}
		finally {
			unlock(held);
		}
	}

	/** Checks every entry under its key's lock and takes nothing. */
	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		List<Entry> entries = request.entries();
		String[] keys = keys(entries);
		ReentrantLock[] held = Objects.requireNonNull(lock(keys, true));
		try {
			long time = (request.explicitTimeMicros() >= 0) ? request.explicitTimeMicros()
					: this.clockMicros.getAsLong();
			List<PolicyDecision> decisions = new ArrayList<>(entries.size());
			for (int i = 0; i < entries.size(); i++) {
				LocalAlgorithm algorithm = LocalAlgorithms.of(entries.get(i).policy().algorithm());
				State state = this.states.getIfPresent(keys[i]);
				Eval c = new Eval(entries.get(i), time, INSPECTION, request.hasExplicitTime());
				algorithm.check(c, state);
				if (state != null && c.rewritten) {
					this.states.put(keys[i], state);
				}
				decisions.add(PolicyDecision.of(entries.get(i), c.ok, (long) c.rb, (long) c.zb,
						c.ok ? 0 : (long) c.retry));
			}
			return decisions;
		}
		finally {
			unlock(held);
		}
	}

	/** Forgets the entries' keys under their locks. */
	@Override
	public void reset(List<Entry> entries) {
		String[] keys = keys(entries);
		ReentrantLock[] held = Objects.requireNonNull(lock(keys, true));
		try {
			for (String key : keys) {
				this.states.invalidate(key);
			}
		}
		finally {
			unlock(held);
		}
	}

	/** Forgets every matching key, each under its own lock. */
	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		long removed = 0;
		for (String key : List.copyOf(this.states.asMap().keySet())) {
			if (this.keys.matches(key, policyName, identity)) {
				ReentrantLock[] held = Objects.requireNonNull(lock(new String[] { key }, true));
				try {
					if (this.states.asMap().remove(key) != null) {
						removed++;
					}
				}
				finally {
					unlock(held);
				}
			}
		}
		return removed;
	}

	/** Like {@link #acquire}: on the caller's thread unless a lock is taken. */
	@Override
	public Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		return Mono.defer(() -> {
			String[] keys = keys(entries);
			ReentrantLock[] held = lock(keys, false);
			if (held != null) {
				releaseLocked(entries, requestId, acquiredAtMicros, sequences, keys, held);
				return Mono.<Void>empty();
			}
			return Mono.<Void>fromRunnable(
					() -> releaseLocked(entries, requestId, acquiredAtMicros, sequences, keys, waitFor(keys)))
				.subscribeOn(Schedulers.boundedElastic());
		});
	}

	private void releaseLocked(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences, String[] keys, ReentrantLock[] held) {
		try {
			for (int i = 0; i < entries.size(); i++) {
				State state = this.states.getIfPresent(keys[i]);
				if (state != null) {
					LocalAlgorithm algorithm = LocalAlgorithms.of(entries.get(i).policy().algorithm());
					Eval c = new Eval(entries.get(i), acquiredAtMicros.get(i), requestId, true);
					c.seq = sequences.get(i);
					algorithm.refund(c, state);
				}
			}
		}
		finally {
			unlock(held);
		}
	}

	/** @return the number of keys held, after dropping expired ones */
	public long keyCount() {
		this.states.cleanUp();
		return this.states.estimatedSize();
	}

	private String[] keys(List<Entry> entries) {
		String[] keys = new String[entries.size()];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = this.keys.key(entries.get(i).policy(), entries.get(i).identity());
		}
		return keys;
	}

	/**
	 * Locks the keys' stripes in ascending order (no cycle); without {@code wait}, null and nothing held when one is
	 * taken.
	 */
	/** The keys' locks, waited for: only ever on a bounded elastic thread. */
	private ReentrantLock[] waitFor(String[] keys) {
		return Objects.requireNonNull(lock(keys, true));
	}

	private ReentrantLock @Nullable [] lock(String[] keys, boolean wait) {
		boolean[] needed = new boolean[STRIPES];
		int count = 0;
		for (String key : keys) {
			int stripe = (key.hashCode() * 0x9E3779B9) >>> 24; // the high bits of a Fibonacci hash: 0..255
			if (!needed[stripe]) {
				needed[stripe] = true;
				count++;
			}
		}
		ReentrantLock[] held = new ReentrantLock[count];
		int n = 0;
		for (int stripe = 0; stripe < STRIPES; stripe++) {
			if (needed[stripe]) {
				ReentrantLock lock = this.locks[stripe];
				if (wait) {
					lock.lock();
				}
				else if (!lock.tryLock()) {
					unlock(Arrays.copyOf(held, n));
					return null;
				}
				held[n++] = lock;
			}
		}
		return held;
	}

	private static void unlock(ReentrantLock[] held) {
		for (int i = held.length - 1; i >= 0; i--) {
			held[i].unlock();
		}
	}

	/** Expires a key its TTL after its last write, like PEXPIRE on its Redis twin; reads do not extend it. */
	private static final class TtlExpiry implements Expiry<String, State> {

		@Override
		public long expireAfterCreate(String key, State state, long currentTime) {
			return TimeUnit.MICROSECONDS.toNanos(state.ttlMicros);
		}

		@Override
		public long expireAfterUpdate(String key, State state, long currentTime, long currentDuration) {
			return TimeUnit.MICROSECONDS.toNanos(state.ttlMicros);
		}

		@Override
		public long expireAfterRead(String key, State state, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
