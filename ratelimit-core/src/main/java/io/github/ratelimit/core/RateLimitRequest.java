package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Everything one request must pass: each policy with the identity it counts and its cost. Admitted only when every
 * entry admits; an entry uses up no quota when another denies. The same policy and identity twice counts once, at
 * the higher cost.
 */
public final class RateLimitRequest {

	private final List<Entry> entries;

	private final long explicitTimeMicros;

	private RateLimitRequest(List<Entry> entries, long explicitTimeMicros) {
		this.entries = entries;
		this.explicitTimeMicros = explicitTimeMicros;
	}

	/** {@return a request of one policy for one identity (a client address, an API key) at the policy's cost} */
	public static RateLimitRequest of(RateLimitPolicy policy, String identity) {
		return builder().add(policy, identity).build();
	}

	public static Builder builder() {
		return new Builder();
	}

	public List<Entry> entries() {
		return this.entries;
	}

	/** {@return whether {@link Builder#at(long)} set an explicit time instead of the backend's clock} */
	public boolean hasExplicitTime() {
		return this.explicitTimeMicros >= 0;
	}

	/** {@return the explicit time in microseconds since the epoch, or -1 for the backend's clock} */
	public long explicitTimeMicros() {
		return this.explicitTimeMicros;
	}

	/** The entries that match, at this request's time: this request when all do, null when none does. */
	@Nullable RateLimitRequest part(Predicate<Entry> which) {
		List<Entry> part = null;
		for (Entry entry : this.entries) {
			if (which.test(entry)) {
				part = (part != null) ? part : new ArrayList<>(this.entries.size());
				part.add(entry);
			}
		}
		if (part == null) {
			return null;
		}
		return (part.size() == this.entries.size()) ? this : withEntries(part);
	}

	/** A request of some of this one's entries, at its time. */
	RateLimitRequest withEntries(List<Entry> entries) {
		return new RateLimitRequest(Collections.unmodifiableList(entries), this.explicitTimeMicros);
	}

	/**
	 * One policy for one identity at one cost.
	 *
	 * @param policy the policy
	 * @param identity who is counted (raw; backends make it safe for storage)
	 * @param cost how much quota the request takes, between 1 and the policy's capacity
	 */
	public record Entry(RateLimitPolicy policy, String identity, long cost) {

		public Entry {
			Objects.requireNonNull(policy, "policy");
			Objects.requireNonNull(identity, "identity");
			if (cost < 1 || cost > policy.capacity()) {
				throw new IllegalArgumentException("Cost of a request to policy '" + policy.name()
						+ "' must be between 1 and " + policy.capacity() + " but was " + cost);
			}
		}

	}

	/** Builds a {@link RateLimitRequest}. */
	public static final class Builder {

		/** The only entry while there is one (most requests): no map, key or copy for it. */
		private @Nullable Entry first;

		/** By policy name and identity, once a second entry is added. */
		private @Nullable Map<String, Entry> entries;

		private long explicitTimeMicros = -1;

		private Builder() {
		}

		/** Adds a policy for an identity at the policy's cost. */
		public Builder add(RateLimitPolicy policy, String identity) {
			return add(policy, identity, policy.cost());
		}

		/**
		 * Adds a policy for an identity at a cost; the same policy and identity again counts once, at the higher cost.
		 * @throws IllegalArgumentException when the cost is out of range, or when a different policy of the same
		 * name was added (both would count in one key)
		 */
		public Builder add(RateLimitPolicy policy, String identity, long cost) {
			Entry entry = new Entry(policy, identity, cost);
			if (this.entries == null) {
				if (this.first == null) {
					this.first = entry;
					return this;
				}
				this.entries = new LinkedHashMap<>();
				put(this.entries, this.first);
			}
			put(this.entries, entry);
			return this;
		}

		private static void put(Map<String, Entry> entries, Entry entry) {
			RateLimitPolicy policy = entry.policy();
			String id = policy.name() + '\u0000' + entry.identity();
			Entry previous = entries.get(id);
			if (previous != null && !previous.policy().equals(policy)) {
				throw new IllegalArgumentException("Two different policies named '" + policy.name()
						+ "' in one request: " + previous.policy() + " and " + policy);
			}
			entries.put(id, (previous != null && previous.cost() >= entry.cost()) ? previous : entry);
		}

		/** Decides at an explicit time (µs since the epoch, not negative), not the backend's clock: for tests. */
		public Builder at(long epochMicros) {
			if (epochMicros < 0) {
				throw new IllegalArgumentException("Explicit time must not be negative but was " + epochMicros);
			}
			this.explicitTimeMicros = epochMicros;
			return this;
		}

		public RateLimitRequest build() {
			List<Entry> all = (this.entries != null) ? Collections.unmodifiableList(new ArrayList<>(this.entries.values()))
					: (this.first != null) ? Collections.singletonList(this.first) : Collections.emptyList();
			return new RateLimitRequest(all, this.explicitTimeMicros);
		}

	}

}
