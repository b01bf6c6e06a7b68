package io.github.ratelimit.core.local;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;
import io.github.ratelimit.core.CacheUpkeep;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import io.github.ratelimit.core.Waits;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Counters in this instance's memory, with the Redis backend's algorithms and decisions; limits are per instance. A
 * key expires as its Redis twin would; at most {@code maximumKeys} are kept (an evicted key forgets its counts and
 * permits: size the bound above the active keys).
 */
public final class LocalRateLimitBackend implements RateLimitBackend {

	/** Default bound on the number of keys kept. */
	public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

	private static final int STRIPES = 256;

	/** How many times a thread that may block retries a held lock before it parks (see {@link #waitFor}). */
	private static final int SPINS = 64;

	private final LongSupplier clockMicros;

	private final Cache<String, State> states;

	/** Moves a key's expiry without writing it: a state changed in place needs no write to the cache. */
	private final Policy.VarExpiration<String, State> expiry;

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
		// a key expires its TTL after its last write, like PEXPIRE on its Redis twin (keep() moves it when a state
		// changes in place); reads do not extend it. Upkeep runs on the calling thread where it may (CacheUpkeep)
		this.states = Caffeine.newBuilder()
			.executor(CacheUpkeep.EXECUTOR)
			.maximumSize(maximumKeys)
			.ticker(() -> clockMicros.getAsLong() * 1_000L)
			.expireAfter(Expiry.<String, State>writing((key, state) -> Duration.of(state.ttlMicros, ChronoUnit.MICROS)))
			.build();
		this.expiry = this.states.policy().expireVariably().orElseThrow();
		Arrays.setAll(this.locks, (i) -> new ReentrantLock());
	}

	/** @return the wall clock in microseconds since the epoch, as Redis' {@code TIME} gives it */
	public static LongSupplier systemClock() {
		return () -> ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
	}

	@Override
	public String kind() {
		return "local";
	}

	/**
	 * On the caller's thread when the keys' locks are free at once, or when that thread waits for the answer in
	 * {@link Waits#await} (it waits for the locks, interruptibly); else on a bounded elastic thread.
	 */
	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		String[] keys = keys(request.entries());
		return underLocks(keys, () -> evaluate(request, requestId, keys, true));
	}

	/** Checks every entry under its key's lock and takes nothing (so under no request id). */
	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		String[] keys = keys(request.entries());
		return locked(keys, () -> evaluate(request, "", keys, false)).decisions();
	}

	/** Checks every entry and, when {@code take} and every entry admits, takes the cost of each; under the locks. */
	private Acquisition evaluate(RateLimitRequest request, String requestId, String[] keys, boolean take) {
		List<Entry> entries = request.entries();
		long time = (request.explicitTimeMicros() >= 0) ? request.explicitTimeMicros() : this.clockMicros.getAsLong();
		LocalAlgorithm[] algorithms = new LocalAlgorithm[entries.size()];
		@Nullable State[] states = new @Nullable State[entries.size()];
		Eval[] evals = new Eval[entries.size()];
		boolean all = take;
		for (int i = 0; i < entries.size(); i++) {
			algorithms[i] = LocalAlgorithm.of(entries.get(i).policy().algorithm());
			states[i] = this.states.getIfPresent(keys[i]);
			evals[i] = new Eval(entries.get(i), time, requestId, request.hasExplicitTime());
			algorithms[i].check(evals[i], states[i]);
			State state = states[i];
			if (state != null && evals[i].rewritten) {
				this.states.put(keys[i], state);
			}
			all &= evals[i].ok;
		}
		List<PolicyDecision> decisions = new ArrayList<>(entries.size());
		List<Long> sequences = new ArrayList<>(entries.size());
		for (int i = 0; i < entries.size(); i++) {
			Eval c = evals[i];
			if (all) {
				keep(keys[i], states[i], algorithms[i].commit(c, states[i]));
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

	/**
	 * Keeps a key's committed state for its TTL from now, as {@code SET ... PX} or {@code PEXPIRE} would. A state
	 * changed in place only has its expiry moved (a read to the cache, not a write, so no upkeep to run after it);
	 * put again when new, or when it was evicted or expired since it was read.
	 */
	private void keep(String key, @Nullable State read, State committed) {
		if (committed == read) {
			this.expiry.setExpiresAfter(key, committed.ttlMicros, TimeUnit.MICROSECONDS);
			if (this.states.policy().getIfPresentQuietly(key) == committed) {
				return;
			}
		}
		this.states.put(key, committed);
	}

	/** Forgets the entries' keys under their locks. */
	@Override
	public void reset(List<Entry> entries) {
		String[] keys = keys(entries);
		locked(keys, () -> this.states.asMap().keySet().removeAll(Arrays.asList(keys)));
	}

	/** Forgets every matching key, each under its own lock. */
	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		return List.copyOf(this.states.asMap().keySet())
			.stream()
			.filter((key) -> this.keys.matches(key, policyName, identity))
			.filter((key) -> locked(new String[] { key }, () -> this.states.asMap().remove(key) != null))
			.count();
	}

	/** On the same threads as {@link #acquire}. */
	@Override
	public Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		String[] keys = keys(entries);
		return underLocks(keys, () -> refund(entries, requestId, acquiredAtMicros, sequences, keys)).then();
	}

	/** Gives back each entry that still has state, under the locks; how many had (a value for the {@code Mono}). */
	private int refund(List<Entry> entries, String requestId, List<Long> acquiredAtMicros, List<Long> sequences,
			String[] keys) {
		int refunded = 0;
		for (int i = 0; i < entries.size(); i++) {
			State state = this.states.getIfPresent(keys[i]);
			if (state != null) {
				Eval c = new Eval(entries.get(i), acquiredAtMicros.get(i), requestId, true);
				c.seq = sequences.get(i);
				LocalAlgorithm.of(entries.get(i).policy().algorithm()).refund(c, state);
				refunded++;
			}
		}
		return refunded;
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
	 * The work under the keys' locks: on the caller's thread when they are free or when that thread waits for the
	 * answer anyway ({@link Waits#waitsHere}: a servlet thread, a blocking check), else waited for elsewhere. An
	 * interrupt ends the waiter's wait for a lock: the work is then handed over too, and {@code Waits.await}, seeing
	 * the interrupt, cancels it and fails as it always did.
	 */
	private <T> Mono<T> underLocks(String[] keys, Supplier<T> work) {
		return Mono.deferContextual((context) -> {
			ReentrantLock[] held = lock(keys, Waits.waitsHere(context) ? Wait.UNTIL_INTERRUPTED : Wait.NEVER);
			if (held == null) {
				return Mono.fromSupplier(() -> locked(keys, work)).subscribeOn(Schedulers.boundedElastic());
			}
			try {
				return Mono.just(work.get());
			}
			finally {
				unlock(held);
			}
		});
	}

	/** The work under the keys' locks, waited for (never on an event loop: the non-blocking path tries them). */
	private <T> T locked(String[] keys, Supplier<T> work) {
		ReentrantLock[] held = Objects.requireNonNull(lock(keys, Wait.ALWAYS));
		try {
			return work.get();
		}
		finally {
			unlock(held);
		}
	}

	/** Locks the keys' stripes in ascending order; null (nothing held) when {@code wait} gives up on one. */
	private ReentrantLock @Nullable [] lock(String[] keys, Wait wait) {
		int[] stripes = stripes(keys);
		ReentrantLock[] held = new ReentrantLock[stripes.length];
		for (int n = 0; n < stripes.length; n++) {
			ReentrantLock lock = this.locks[stripes[n]];
			if (!lock.tryLock() && !waitFor(lock, wait)) {
				unlock(Arrays.copyOf(held, n));
				return null;
			}
			held[n] = lock;
		}
		return held;
	}

	/** The keys' distinct stripes in ascending order: the high bits of a Fibonacci hash of each, 0..255. */
	private static int[] stripes(String[] keys) {
		int[] stripes = new int[keys.length];
		for (int i = 0; i < keys.length; i++) {
			stripes[i] = (keys[i].hashCode() * 0x9E3779B9) >>> 24;
		}
		if (stripes.length == 1) {
			return stripes;
		}
		return Arrays.stream(stripes).distinct().sorted().toArray();
	}

	/**
	 * Waits for a lock another thread holds, as {@code wait} says; whether it is now held. A thread that may block
	 * first tries again {@value #SPINS} times (unless interrupted): a decision holds the lock for less than a thread's
	 * park and wake-up cost, so a hot key's waiters mostly get it without either.
	 */
	private static boolean waitFor(ReentrantLock lock, Wait wait) {
		if (wait == Wait.NEVER) {
			return false;
		}
		for (int spin = 0; spin < SPINS && !Thread.currentThread().isInterrupted(); spin++) {
			Thread.onSpinWait();
			if (!lock.isLocked() && lock.tryLock()) { // a read before the write: spinners leave the holder's line be
				return true;
			}
		}
		if (wait == Wait.ALWAYS) {
			lock.lock();
			return true;
		}
		try {
			lock.lockInterruptibly();
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt(); // for Waits.await, which fails on it
			return false;
		}
	}

	/** How {@link #lock} waits for a stripe another thread holds. */
	private enum Wait {

		/** Not at all (a thread that must not block: an event loop). */
		NEVER,

		/** Until it is free or the thread is interrupted (the thread waiting for the answer in Waits.await). */
		UNTIL_INTERRUPTED,

		/** Until it is free (the operators' blocking calls, the bounded-elastic hand-off). */
		ALWAYS

	}

	private static void unlock(ReentrantLock[] held) {
		for (int i = held.length - 1; i >= 0; i--) {
			held[i].unlock();
		}
	}

}
