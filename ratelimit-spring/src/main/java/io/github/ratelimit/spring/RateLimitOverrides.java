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
 * The runtime overrides set through the {@code ratelimits} endpoint, for a policy or one identity of it, kept in a
 * {@link Store} and applied from an in-memory copy refreshed on change and at an interval. {@link Listener Listeners}
 * hear of changed overrides and announced resets (what a {@linkplain RateLimitDenialCache denial cache} forgets).
 */
public final class RateLimitOverrides {

	private static final Log logger = LogFactory.getLog(RateLimitOverrides.class);

	/** The store field of what applies to every policy (the kill switch): not a policy name. */
	public static final String ALL = "*";

	private final Store store;

	private final Object reading = new Object();

	private volatile Snapshot snapshot = Snapshot.EMPTY;

	private final List<Listener> listeners = new CopyOnWriteArrayList<>();

	/** Overrides kept in a store, read by {@link #refresh()} (which the store's change notifications call). */
	public RateLimitOverrides(Store store) {
		this.store = store;
		store.onChange(this::refresh);
		store.onReset(this::resetHappened);
	}

	/** Adds a listener of override changes and resets. */
	public void addListener(Listener listener) {
		this.listeners.add(listener);
	}

	/** Tells every instance's listeners (here at once) that the caller reset a policy and identity (null: all). */
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

	/** The policy as configured for the identity (override or tier included) with its runtime overrides applied. */
	public RateLimitPolicy apply(RateLimitPolicy policy, String identity) {
		return this.snapshot.apply(policy, identity);
	}

	/** Whether a policy is enforced: false while its kill switch, or the one of all policies, is off. */
	public boolean enforced(String policy) {
		return this.snapshot.enforced(policy);
	}

	/** Sets the override of a policy or (identity not null) of one identity of it; applies here at once. */
	public void set(String policy, @Nullable String identity, RuntimeOverride override) {
		this.store.put(new Field(policy, identity).toString(), override.format());
		refresh();
	}

	/** Removes the override of a policy or (identity not null) of one identity of it; true if there was one. */
	public boolean remove(String policy, @Nullable String identity) {
		boolean removed = this.store.remove(new Field(policy, identity).toString());
		refresh();
		return removed;
	}

	/** The override of a whole policy as this instance applies it, or null. */
	public @Nullable RuntimeOverride of(String policy) {
		return this.snapshot.overrides.get(new Field(policy, null));
	}

	/** The identity overrides of a policy as this instance applies them, by identity. */
	public Map<String, RuntimeOverride> identities(String policy) {
		Map<String, RuntimeOverride> identities = new LinkedHashMap<>();
		this.snapshot.overrides.forEach((field, override) -> {
			if (field.policy.equals(policy) && field.identity != null) {
				identities.put(field.identity, override);
			}
		});
		return identities;
	}

	/** Reads the store again, waiting at most {@code timeout} (then reading on in the background); true if in time. */
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

	/** Reads the store again; one that cannot be read leaves the copy as it is. */
	public void refresh() {
		// one read at a time: an older read applied after a newer one would bring back a removed override
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

	/** What an instance applies, swapped whole on each refresh, with the policies it built (a bounded number). */
	private record Snapshot(Map<Field, RuntimeOverride> overrides, Map<Applied, RateLimitPolicy> applied) {

		static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of());

		private static final int MAX_APPLIED = 10_000;

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
		 * The override of a policy (or {@link RateLimitOverrides#ALL}), or of one identity (the value of the policy's
		 * own key; null: the policy's), was set, changed or removed, and applies here now. Nothing by default.
		 */
		default void overrideChanged(String policy, @Nullable String identity) {
		}

		/** State of a policy and an identity (as requests name it; null: all) was reset, here or elsewhere. */
		void stateReset(@Nullable String policy, @Nullable String identity);

		/** Makes a backend (the local fallback) forget the state a reset names. */
		static Listener resetting(RateLimitBackend backend) {
			return backend::resetMatching;
		}

		/**
		 * Makes a denial cache forget what a change or reset affects: a changed override's whole policy (an identity
		 * override names the key's value, not the cached identity), everything for the kill switch, what a reset names.
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

	/** Where runtime overrides live: fields (a policy, or a policy and an identity) with their JSON values. */
	public interface Store {

		/** Every field and its value. */
		Map<String, String> load();

		/** Sets a field, and tells every instance that something changed. */
		void put(String field, String value);

		/** Removes a field, and tells every instance that something changed; true if it was there. */
		boolean remove(String field);

		/** Sets what to run when the overrides may have changed, replacing what was set; unused by default. */
		default void onChange(Runnable listener) {
		}

		/** Tells the other instances that state was reset (null: every policy, identity); nothing by default. */
		default void announceReset(@Nullable String policy, @Nullable String identity) {
		}

		/** Sets what hears of other instances' resets (all null: some may be missed), replacing what was set. */
		default void onReset(Listener listener) {
		}

	}

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
