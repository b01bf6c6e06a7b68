package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The runtime overrides an operator set through the {@code ratelimits} endpoint, for a policy or one identity of it,
 * each replacing only the values it sets (on top of the configured override or tier). They live in a {@link Store}
 * (Redis, or memory) and each instance applies an in-memory copy, refreshed on change and at an interval, so the hot
 * path never waits. {@link Listener Listeners} hear of changed overrides and announced resets: what a
 * {@linkplain RateLimitDenialCache denial cache} must forget.
 */
public final class RateLimitOverrides {

	private static final Log logger = LogFactory.getLog(RateLimitOverrides.class);

	/** Separates a policy from an identity in a store field: policy names cannot contain it. */
	private static final char SEPARATOR = '|';

	/** The store field of what applies to every policy (the kill switch): not a policy name. */
	public static final String ALL = "*";

	private final Store store;

	private final ReentrantLock reading = new ReentrantLock();

	private volatile Snapshot snapshot = Snapshot.EMPTY;

	private final List<Listener> listeners = new CopyOnWriteArrayList<>();

	/**
	 * Overrides kept in a store, read by {@link #refresh()} (which the store's change notifications call).
	 * @param store where the overrides live
	 */
	public RateLimitOverrides(Store store) {
		this.store = store;
		store.onChange(this::refresh);
		store.onReset(this::resetHappened);
	}

	/** @param listener hears of override changes and resets */
	public void addListener(Listener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Tells every instance's listeners that the caller reset state in the backend: here at once, elsewhere through the
	 * store.
	 * @param policy the policy reset, or null for every policy
	 * @param identity the identity reset (as requests name it), or null for every identity
	 */
	public void announceReset(@Nullable String policy, @Nullable String identity) {
		resetHappened(policy, identity);
		this.store.announceReset(policy, identity);
	}

	private void resetHappened(@Nullable String policy, @Nullable String identity) {
		tell((listener) -> listener.stateReset(policy, identity));
	}

	private void tell(Consumer<Listener> event) {
		for (Listener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("A rate-limit override or reset listener failed", ex);
			}
		}
	}

	/** @return overrides kept in this instance's memory only */
	public static RateLimitOverrides inMemory() {
		return new RateLimitOverrides(new MemoryStore());
	}

	/**
	 * The policy that applies with the runtime overrides of its name and of the identity.
	 * @param policy the policy as configured for the identity (its configured override or tier included)
	 * @return the policy to enforce
	 */
	public RateLimitPolicy apply(RateLimitPolicy policy, String identity) {
		Snapshot current = this.snapshot;
		return current.isEmpty() ? policy : current.apply(policy, identity);
	}

	/**
	 * Whether a policy is enforced: false while its kill switch, or the one of all policies, is off.
	 * @param policy the policy name
	 * @return true unless switched off
	 */
	public boolean enforced(String policy) {
		Snapshot current = this.snapshot;
		return current.isEmpty() || current.enforced(policy);
	}

	/**
	 * Sets the override of a policy or of one identity of it, applied here at once (elsewhere within the refresh).
	 * @param policy the policy name
	 * @param identity the identity, or null for the whole policy
	 * @param override the values
	 */
	public void set(String policy, @Nullable String identity, RuntimeOverride override) {
		this.store.put(field(policy, identity), override.format());
		refresh();
	}

	/**
	 * Removes the override of a policy or of one identity of it.
	 * @param policy the policy name
	 * @param identity the identity, or null for the whole policy
	 * @return whether there was one
	 */
	public boolean remove(String policy, @Nullable String identity) {
		boolean removed = this.store.remove(field(policy, identity));
		refresh();
		return removed;
	}

	/**
	 * The override of a whole policy, as this instance applies it.
	 * @param policy the policy name
	 * @return the override, or null
	 */
	public @Nullable RuntimeOverride of(String policy) {
		return this.snapshot.policies.get(policy);
	}

	/**
	 * The identity overrides of a policy, as this instance applies them.
	 * @param policy the policy name
	 * @return the overrides by identity
	 */
	public Map<String, RuntimeOverride> identities(String policy) {
		return this.snapshot.identities.getOrDefault(policy, Map.of());
	}

	/**
	 * Reads the store again, waiting at most {@code timeout} (then in the background): so that a frozen Redis cannot
	 * hold the application's startup.
	 * @param timeout the longest wait
	 * @return whether the store was read in time
	 */
	public boolean refresh(Duration timeout) {
		CompletableFuture<Void> reading = CompletableFuture.runAsync(this::refresh);
		try {
			reading.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			return true;
		}
		catch (TimeoutException | ExecutionException ex) {
			logger.debug("The rate-limit overrides were not read within " + timeout + "; reading them in the background");
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Reads the store again; one that cannot be read leaves the copy as it is. One read at a time: an older read
	 * applied after a newer one would bring back, for a moment, an override already removed.
	 */
	public void refresh() {
		this.reading.lock();
		try {
			read();
		}
		finally {
			this.reading.unlock();
		}
	}

	private void read() {
		Map<String, String> fields;
		try {
			fields = this.store.load();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the rate-limit overrides; keeping the ones applied", ex);
			return;
		}
		Map<String, RuntimeOverride> policies = new LinkedHashMap<>();
		Map<String, Map<String, RuntimeOverride>> identities = new LinkedHashMap<>();
		fields.forEach((field, value) -> {
			try {
				RuntimeOverride override = RuntimeOverride.parse(value);
				int separator = field.indexOf(SEPARATOR);
				if (separator < 0) {
					policies.put(field, override);
				}
				else {
					identities.computeIfAbsent(field.substring(0, separator), (name) -> new LinkedHashMap<>())
						.put(field.substring(separator + 1), override);
				}
			}
			catch (IllegalArgumentException ex) {
				logger.warn("Ignoring the unreadable rate-limit override '" + field + "' = '" + value + "': "
						+ ex.getMessage());
			}
		});
		Snapshot applied = new Snapshot(policies, identities);
		Snapshot previous;
		synchronized (this) {
			previous = this.snapshot;
			this.snapshot = applied;
		}
		if (!this.listeners.isEmpty()) {
			changes(previous, applied);
		}
	}

	/** Tells the listeners of each override that differs between two snapshots. */
	private void changes(Snapshot before, Snapshot after) {
		differing(before.policies, after.policies, (policy) -> changed(policy, null));
		differing(before.identities, after.identities,
				(policy) -> differing(before.identities.getOrDefault(policy, Map.of()),
						after.identities.getOrDefault(policy, Map.of()), (identity) -> changed(policy, identity)));
	}

	/** Calls {@code action} with each key whose value differs between two maps (deeply, for maps of maps). */
	private static void differing(Map<String, ?> before, Map<String, ?> after, Consumer<String> action) {
		Set<String> keys = new LinkedHashSet<>(before.keySet());
		keys.addAll(after.keySet());
		keys.stream().filter((key) -> !Objects.equals(before.get(key), after.get(key))).forEach(action);
	}

	private void changed(String policy, @Nullable String identity) {
		tell((listener) -> listener.overrideChanged(policy, identity));
	}

	private static String field(String policy, @Nullable String identity) {
		return (identity != null) ? policy + SEPARATOR + identity : policy;
	}

	/** What an instance applies: immutable, swapped whole on every refresh. */
	private static final class Snapshot {

		static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of());

		/** At most this many overridden policies are kept built (one per policy and overridden identity). */
		private static final int MAX_APPLIED = 10_000;

		/** A policy and an override applied to it. */
		private record Applied(RateLimitPolicy policy, RuntimeOverride override) {
		}

		final Map<String, RuntimeOverride> policies;

		final Map<String, Map<String, RuntimeOverride>> identities;

		/** Overridden policies by what they were made of, so that a hot identity's policy is built once. */
		private final Map<Applied, RateLimitPolicy> applied = new ConcurrentHashMap<>();

		Snapshot(Map<String, RuntimeOverride> policies, Map<String, Map<String, RuntimeOverride>> identities) {
			this.policies = Collections.unmodifiableMap(policies);
			this.identities = Collections.unmodifiableMap(identities);
		}

		boolean isEmpty() {
			return this.policies.isEmpty() && this.identities.isEmpty();
		}

		boolean enforced(String policy) {
			RuntimeOverride all = this.policies.get(ALL);
			RuntimeOverride own = this.policies.get(policy);
			return (all == null || !all.disables()) && (own == null || !own.disables());
		}

		RateLimitPolicy apply(RateLimitPolicy policy, String identity) {
			RateLimitPolicy result = policy;
			RuntimeOverride whole = this.policies.get(policy.name());
			if (whole != null) {
				result = safely(result, whole);
			}
			Map<String, RuntimeOverride> byIdentity = this.identities.get(policy.name());
			RuntimeOverride own = (byIdentity != null) ? byIdentity.get(identity) : null;
			if (own != null) {
				result = safely(result, own);
			}
			return result;
		}

		/** An override that no longer fits the policy (its configuration changed) is skipped, not fatal. */
		private RateLimitPolicy safely(RateLimitPolicy policy, RuntimeOverride override) {
			Applied key = new Applied(policy, override);
			RateLimitPolicy cached = this.applied.get(key);
			if (cached != null) {
				return cached;
			}
			try {
				RateLimitPolicy overridden = policy.with(override.limits());
				if (this.applied.size() < MAX_APPLIED) {
					this.applied.put(key, overridden);
				}
				return overridden;
			}
			catch (IllegalArgumentException ex) {
				logger.debug("Rate-limit override of '" + policy.name() + "' does not fit it: " + ex.getMessage());
				return policy;
			}
		}

	}

	/** Hears what changes the limits or the state of identities, on this instance or another. */
	public interface Listener {

		/**
		 * An override was set, changed or removed; called once the change applies here. Nothing by default.
		 * @param policy the policy name, or {@link RateLimitOverrides#ALL} (the kill switch)
		 * @param identity an identity override's identity (the value of the policy's own key), or null for the policy
		 */
		default void overrideChanged(String policy, @Nullable String identity) {
		}

		/**
		 * State was reset in the backend, here or on another instance.
		 * @param policy the policy, or null for every policy
		 * @param identity the identity (as requests name it, qualified by its source), or null for every identity
		 */
		void stateReset(@Nullable String policy, @Nullable String identity);

		/**
		 * A listener that makes a backend forget the state a reset names (the local fallback, whose counts include
		 * every admission of this instance's {@code local} policies).
		 * @return the listener
		 */
		static Listener resetting(RateLimitBackend backend) {
			return backend::resetMatching;
		}

		/**
		 * A listener that makes a denial cache forget what a change or reset affects: a changed override's whole
		 * policy (an identity override names the key's value, not the cached identity), everything for the kill
		 * switch, exactly what a reset names.
		 * @return the listener
		 */
		static Listener invalidating(RateLimitDenialCache cache) {
			return new Listener() {

				@Override
				public void overrideChanged(String policy, @Nullable String identity) {
					if (ALL.equals(policy)) {
						cache.invalidateAll();
					}
					else {
						cache.invalidatePolicy(policy);
					}
				}

				@Override
				public void stateReset(@Nullable String policy, @Nullable String identity) {
					if (policy == null && identity == null) {
						cache.invalidateAll();
					}
					else if (policy == null) {
						cache.invalidateIdentity(Objects.requireNonNull(identity));
					}
					else if (identity == null) {
						cache.invalidatePolicy(policy);
					}
					else {
						cache.invalidate(policy, identity);
					}
				}

			};
		}

	}

	/**
	 * Where runtime overrides live: fields (a policy name, or a policy name and an identity) with their values as
	 * {@link RuntimeOverride#format()} writes them.
	 */
	public interface Store {

		/** @return every field and its value */
		Map<String, String> load();

		/** Sets a field, and tells every instance that something changed. */
		void put(String field, String value);

		/**
		 * Removes a field, and tells every instance that something changed.
		 * @return whether it was there
		 */
		boolean remove(String field);

		/** @param listener called when the overrides may have changed: on a notification and at each reconcile */
		void onChange(Runnable listener);

		/**
		 * Tells the other instances that state was reset; nothing by default (a store of one instance).
		 * @param policy the policy, or null for every policy
		 * @param identity the identity, or null for every identity
		 */
		default void announceReset(@Nullable String policy, @Nullable String identity) {
		}

		/**
		 * Registers what to do when another instance announces a reset; never called by default.
		 * @param listener its {@link Listener#stateReset} is called with the policy and the identity reset (null for
		 * all), both null when resets may have been missed
		 */
		default void onReset(Listener listener) {
		}

	}

	/** Overrides in this instance's memory. */
	private static final class MemoryStore implements Store {

		private final Map<String, String> fields = new ConcurrentHashMap<>();

		@Override
		public Map<String, String> load() {
			return Map.copyOf(this.fields);
		}

		@Override
		public void put(String field, String value) {
			this.fields.put(field, value);
		}

		@Override
		public boolean remove(String field) {
			return this.fields.remove(field) != null;
		}

		@Override
		public void onChange(Runnable listener) {
			// set and remove refresh the overrides themselves
		}

	}

}
