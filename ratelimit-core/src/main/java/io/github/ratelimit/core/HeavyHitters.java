package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The most frequent items of a stream in fixed memory: the Space-Saving algorithm (Metwally, Agrawal, El Abbadi,
 * 2005) over at most {@code capacity} counters. An item not counted yet, when every counter is taken, replaces the
 * item of the smallest count and inherits that count as its {@code error}. So a count is never below the item's
 * true count, and never above it by more than {@code total / capacity}; an item seen more than
 * {@code total / capacity} times is always kept. Thread-safe: every method holds this object's monitor for work
 * in memory only (at most one walk of the counters). Each counter may carry a tag (the last one its item was added
 * with), for what the caller needs to know of the item beside its count.
 */
public final class HeavyHitters {

	private final int capacity;

	private final Map<String, Counter> counters;

	private long total;

	/** @throws IllegalArgumentException when the capacity is not positive */
	public HeavyHitters(int capacity) {
		if (capacity < 1) {
			throw new IllegalArgumentException("The capacity must be positive but was " + capacity);
		}
		this.capacity = capacity;
		this.counters = new HashMap<>(capacity * 2);
	}

	/** Counts one occurrence of an item. */
	public void add(String item) {
		add(item, null);
	}

	/** Counts one occurrence of an item, its counter tagged with {@code tag} (replacing an earlier one). */
	public synchronized void add(String item, @Nullable String tag) {
		this.total++;
		Counter counter = this.counters.get(item);
		if (counter != null) {
			counter.count++;
			counter.tag = tag;
			return;
		}
		if (this.counters.size() < this.capacity) {
			Counter fresh = new Counter();
			fresh.tag = tag;
			this.counters.put(item, fresh);
			return;
		}
		Map.Entry<String, Counter> smallest = smallest();
		this.counters.remove(smallest.getKey());
		Counter replaced = smallest.getValue();
		// the item may have been seen before, under the evicted counter: at most that count times
		replaced.error = replaced.count;
		replaced.count++;
		replaced.tag = tag;
		this.counters.put(item, replaced);
	}

	private Map.Entry<String, Counter> smallest() {
		Map.Entry<String, Counter> smallest = null;
		for (Map.Entry<String, Counter> entry : this.counters.entrySet()) {
			if (smallest == null || entry.getValue().count < smallest.getValue().count) {
				smallest = entry;
			}
		}
		return Objects.requireNonNull(smallest);
	}

	/** Forgets the items matching a predicate, and their counts in the total. */
	public synchronized void removeIf(Predicate<String> items) {
		this.counters.entrySet().removeIf((entry) -> {
			if (items.test(entry.getKey())) {
				// at least this many of the total were the item's
				this.total -= entry.getValue().count - entry.getValue().error;
				return true;
			}
			return false;
		});
	}

	/** {@return the occurrences counted, items forgotten or not (those removed excepted)} */
	public synchronized long total() {
		return this.total;
	}

	/** {@return how many counters are kept, at most the capacity} */
	public synchronized int size() {
		return this.counters.size();
	}

	/** {@return the smallest count kept, or 0 while a counter is free: the most an item not kept may have had} */
	public synchronized long floor() {
		return (this.counters.size() < this.capacity) ? 0 : smallest().getValue().count;
	}

	/** {@return every counted item, the highest count first} */
	public synchronized List<Counted> items() {
		List<Counted> items = new ArrayList<>(this.counters.size());
		this.counters.forEach((item, counter) -> items.add(new Counted(item, counter.count, counter.error, counter.tag)));
		items.sort(Counted.BY_COUNT);
		return items;
	}

	/**
	 * An item's count: at least its true count, at most {@code error} above it.
	 *
	 * @param item the item
	 * @param count its count
	 * @param error the most by which {@code count} may exceed the true count
	 * @param tag the tag of the item's last addition, null for none
	 */
	public record Counted(String item, long count, long error, @Nullable String tag) {

		/** The highest count first, then by item for a stable order. */
		public static final Comparator<Counted> BY_COUNT = Comparator.comparingLong(Counted::count)
			.reversed()
			.thenComparing(Counted::item);

	}

	private static final class Counter {

		long count;

		long error;

		@Nullable String tag;

		Counter() {
			this.count = 1;
		}

	}

}
