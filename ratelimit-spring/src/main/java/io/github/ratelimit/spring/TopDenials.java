package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.HeavyHitters;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import org.jspecify.annotations.Nullable;

/**
 * This instance's most refused identities per policy: a {@link HeavyHitters} summary of at most {@code capacity}
 * identities per half of the window, two halves kept (the current one counting, the one before it), so a summary
 * covers the denials of the last half window to whole window. Recording a denial takes one short lock in memory and
 * never calls Redis. A reset heard of (here or on another instance) forgets what it names.
 */
public final class TopDenials implements RateLimitOverrides.Listener, TopDenialsSource {

	private final int capacity;

	private final long halfNanos;

	private final LongSupplier nanoTime;

	private final Map<String, Halves> policies = new ConcurrentHashMap<>();

	private volatile Runnable resetHook = () -> {
	};

	/**
	 * @param capacity the most identities counted per policy and half window
	 * @param window how far back denials count (between half of it and all of it)
	 */
	public TopDenials(int capacity, Duration window) {
		this(capacity, window, System::nanoTime);
	}

	TopDenials(int capacity, Duration window, LongSupplier nanoTime) {
		if (capacity < 1 || window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("capacity and window must be positive");
		}
		this.capacity = capacity;
		this.halfNanos = Math.max(1, window.toNanos() / 2);
		this.nanoTime = nanoTime;
	}

	/** Counts the identities a decision refused by quota (not a policy failing closed; shadow policies never refuse). */
	public void record(RateLimitDecision decision) {
		if (decision.allowed()) {
			return;
		}
		for (PolicyDecision each : decision.decisions()) {
			if (!each.allowed() && each.enforcement() != Enforcement.FAILED_CLOSED) {
				record(each.policy().name(), each.identity());
			}
		}
	}

	/** Counts one denial of an identity by a policy. */
	public void record(String policy, String identity) {
		long now = this.nanoTime.getAsLong();
		Halves halves = this.policies.get(policy);
		if (halves == null) {
			halves = this.policies.computeIfAbsent(policy, (name) -> new Halves(now));
		}
		halves.current(now).add(identity);
	}

	@Override
	public Set<String> policies() {
		return this.policies.keySet();
	}

	/** {@return this instance's summary of a policy's denials over the window, the most refused first} */
	@Override
	public Summary summary(String policy) {
		Halves halves = this.policies.get(policy);
		if (halves == null) {
			return Summary.EMPTY;
		}
		HeavyHitters[] both = halves.both(this.nanoTime.getAsLong());
		Summary merged = Summary.merge(List.of(summary(both[0]), summary(both[1])), this.capacity);
		return new Summary(merged.denials(), merged.identities(), 1);
	}

	private static Summary summary(HeavyHitters half) {
		Map<String, Long> counts = new LinkedHashMap<>();
		half.items().forEach((counted) -> counts.put(counted.item(), counted.count()));
		return new Summary(half.total(), counts, 1);
	}

	/** {@return the counters kept over every policy and half: at most twice the capacity per policy} */
	public int counters() {
		int counters = 0;
		for (Halves halves : this.policies.values()) {
			HeavyHitters[] both = halves.both(this.nanoTime.getAsLong());
			counters += both[0].size() + both[1].size();
		}
		return counters;
	}

	/** Runs after a reset was applied here (the Redis exchange publishes again at once). */
	public void onReset(Runnable hook) {
		this.resetHook = hook;
	}

	@Override
	public void stateReset(@Nullable String policy, @Nullable String identity) {
		if (policy == null && identity == null) {
			this.policies.clear();
		}
		else if (identity == null) {
			this.policies.remove(policy);
		}
		else {
			this.policies.forEach((name, halves) -> {
				if (policy == null || policy.equals(name)) {
					halves.forget(identity);
				}
			});
		}
		this.resetHook.run();
	}

	/** The two halves of a policy's window; the counting one turns into the previous one every half window. */
	private final class Halves {

		private volatile HeavyHitters current;

		private volatile HeavyHitters previous;

		private volatile long started;

		Halves(long now) {
			this.current = new HeavyHitters(TopDenials.this.capacity);
			this.previous = new HeavyHitters(TopDenials.this.capacity);
			this.started = now;
		}

		HeavyHitters current(long now) {
			if (now - this.started >= TopDenials.this.halfNanos) {
				rotate(now);
			}
			return this.current;
		}

		HeavyHitters[] both(long now) {
			HeavyHitters counting = current(now);
			return new HeavyHitters[] { counting, this.previous };
		}

		private synchronized void rotate(long now) {
			long elapsed = now - this.started;
			if (elapsed < TopDenials.this.halfNanos) {
				return; // another thread rotated
			}
			// a whole window without a denial leaves nothing to keep
			this.previous = (elapsed < 2 * TopDenials.this.halfNanos) ? this.current
					: new HeavyHitters(TopDenials.this.capacity);
			this.current = new HeavyHitters(TopDenials.this.capacity);
			this.started = now;
		}

		void forget(String identity) {
			this.current.removeIf(identity::equals);
			this.previous.removeIf(identity::equals);
		}

	}

	/**
	 * Denials of a policy over the window: their number and the most refused identities with their counts (each at
	 * least the true count, above it by at most the denials divided by the capacity), the highest first.
	 *
	 * @param denials the policy's denials counted
	 * @param identities the most refused identities and their denials
	 * @param instances how many instances' summaries this one combines
	 */
	public record Summary(long denials, Map<String, Long> identities, int instances) {

		/** No denial. */
		public static final Summary EMPTY = new Summary(0, Map.of(), 0);

		/** {@return summaries added up: counts summed per identity, the {@code capacity} highest kept} */
		public static Summary merge(List<Summary> summaries, int capacity) {
			long denials = 0;
			int instances = 0;
			Map<String, Long> counts = new HashMap<>();
			for (Summary summary : summaries) {
				denials += summary.denials();
				instances += summary.instances();
				summary.identities().forEach((identity, count) -> counts.merge(identity, count, Long::sum));
			}
			Map<String, Long> top = new LinkedHashMap<>();
			counts.entrySet()
				.stream()
				.sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
				.limit(capacity)
				.forEachOrdered((entry) -> top.put(entry.getKey(), entry.getValue()));
			return new Summary(denials, top, instances);
		}

	}

}
