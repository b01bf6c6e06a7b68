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

	/** The store field of what applies to every policy (the kill switch): not a policy name. */
	public static final String ALL = "*";

	private final Store store;

	/** Held by a read of the store. */
	private final Object reading = new Object();

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
		return this.snapshot.apply(policy, identity);
	}

	/**
	 * Whether a policy is enforced: false while its kill switch, or the one of all policies, is off.
	 * @param policy the policy name
	 * @return true unless switched off
	 */
	public boolean enforced(String policy) {
		return this.snapshot.enforced(policy);
	}

	/**
	 * Sets the override of a policy or of one identity of it, applied here at once (elsewhere within the refresh).
	 * @param policy the policy name
	 * @param identity the identity, or null for the whole policy
	 * @param override the values
	 */
	public void set(String policy, @Nullable String identity, RuntimeOverride override) {
		this.store.put(new Field(policy, identity).toString(), override.format());
		refresh();
	}

	/**
	 * Removes the override of a policy or of one identity of it.
	 * @param policy the policy name
	 * @param identity the identity, or null for the whole policy
	 * @return whether there was one
	 */
	public boolean remove(String policy, @Nullable String identity) {
		boolean removed = this.store.remove(new Field(policy, identity).toString());
		refresh();
		return removed;
	}

	/**
	 * The override of a whole policy, as this instance applies it.
	 * @param policy the policy name
	 * @return the override, or null
	 */
	public @Nullable RuntimeOverride of(String policy) {
		return this.snapshot.overrides.get(new Field(policy, null));
	}

	/**
	 * The identity overrides of a policy, as this instance applies them.
	 * @param policy the policy name
	 * @return the overrides by identity
	 */
	public Map<String, RuntimeOverride> identities(String policy) {
		Map<String, RuntimeOverride> identities = new LinkedHashMap<>();
		this.snapshot.overrides.forEach((field, override) -> {
			if (field.policy.equals(policy) && field.identity != null) {
				identities.put(field.identity, override);
			}
		});
		return identities;
	}

	/**
	 * Reads the store again, waiting at most {@code timeout} (then in the background): so that a frozen Redis cannot
	 * hold the application's startup.
	 * @param timeout the longest wait
	 * @return whether the store was read in time
	 */
	public boolean refresh(Duration timeout) {
		try {
			CompletableFuture.runAsync(this::refresh).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
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
		synchronized (this.reading) {
			Snapshot applied;
			try {
				applied = Snapshot.read(this.store.load());
			}
			catch (RuntimeException ex) {
				logger.debug("Could not read the rate-limit overrides; keeping the ones applied", ex);
				return;
			}
			Snapshot previous = this.snapshot;
			this.snapshot = applied;
			Set<Field> fields = new LinkedHashSet<>(previous.overrides.keySet());
			fields.addAll(applied.overrides.keySet());
			fields.stream()
				.filter((field) -> !Objects.equals(previous.overrides.get(field), applied.overrides.get(field)))
				.forEach((field) -> tell((listener) -> listener.overrideChanged(field.policy, field.identity)));
		}
	}

	/** A store field: a policy, or a policy and one identity of it ({@code <policy>|<identity>}). */
	private record Field(String policy, @Nullable String identity) {

		/** Separates a policy from an identity: policy names cannot contain it. */
		private static final char SEPARATOR = '|';

		static Field parse(String field) {
			int separator = field.indexOf(SEPARATOR);
			return (separator < 0) ? new Field(field, null)
					: new Field(field.substring(0, separator), field.substring(separator + 1));
		}

		@Override
		public String toString() {
			return (this.identity != null) ? this.policy + SEPARATOR + this.identity : this.policy;
		}

	}

	/**
	 * What an instance applies: immutable, swapped whole on every refresh, with the policies it made, so that a hot
	 * identity's policy is built once (at most {@value #MAX_APPLIED} of them).
	 */
	private record Snapshot(Map<Field, RuntimeOverride> overrides, Map<Applied, RateLimitPolicy> applied) {

		static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of());

		private static final int MAX_APPLIED = 10_000;

		/** A policy and an override applied to it. */
		private record Applied(RateLimitPolicy policy, RuntimeOverride override) {
		}

		/** The overrides of the store's fields; an unreadable one is skipped. */
		static Snapshot read(Map<String, String> fields) {
			Map<Field, RuntimeOverride> overrides = new LinkedHashMap<>();
			fields.forEach((field, value) -> {
				try {
					overrides.put(Field.parse(field), RuntimeOverride.parse(value));
				}
				catch (IllegalArgumentException ex) {
					logger.warn("Ignoring the unreadable rate-limit override '" + field + "' = '" + value + "': "
							+ ex.getMessage());
				}
			});
			return new Snapshot(Collections.unmodifiableMap(overrides), new ConcurrentHashMap<>());
		}

		boolean enforced(String policy) {
			if (this.overrides.isEmpty()) {
				return true;
			}
			RuntimeOverride all = this.overrides.get(new Field(ALL, null));
			RuntimeOverride own = this.overrides.get(new Field(policy, null));
			return (all == null || !all.disables()) && (own == null || !own.disables());
		}

		RateLimitPolicy apply(RateLimitPolicy policy, String identity) {
			if (this.overrides.isEmpty()) {
				return policy;
			}
			RateLimitPolicy whole = safely(policy, this.overrides.get(new Field(policy.name(), null)));
			return safely(whole, this.overrides.get(new Field(policy.name(), identity)));
		}

		/** An override that no longer fits the policy (its configuration changed) is skipped, not fatal. */
		private RateLimitPolicy safely(RateLimitPolicy policy, @Nullable RuntimeOverride override) {
			if (override == null) {
				return policy;
			}
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

		/**
		 * Sets what to do when the overrides may have changed (on a notification, at each reconcile), replacing what
		 * was set; never called by default (a store of one instance: set and remove refresh the overrides themselves).
		 */
		default void onChange(Runnable listener) {
		}

		/**
		 * Tells the other instances that state was reset; nothing by default (a store of one instance).
		 * @param policy the policy, or null for every policy
		 * @param identity the identity, or null for every identity
		 */
		default void announceReset(@Nullable String policy, @Nullable String identity) {
		}

		/**
		 * Sets what to do when another instance announces a reset, replacing what was set; never called by default.
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

	}

}
