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
import io.github.ratelimit.core.RateLimitKeys;
import org.jspecify.annotations.Nullable;

/**
 * This instance's most refused identities per policy: a {@link HeavyHitters} summary of at most {@code capacity}
 * identities per half of the window, two halves kept (the current one counting, the one before it). Halves start on
 * whole multiples of the half window from the first denial, so a summary covers the denials of the last half window to
 * whole window, never older. Identities are kept as the limiter keys them ({@link RateLimitKeys#safeIdentity}: a
 * digest for a long or hostile value), with the tier whose limits refused them. Recording a denial takes one short
 * lock in memory and never calls Redis. A reset heard of (here or on another instance) forgets what it names.
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
				record(each.policy().name(), each.identity(), each.policy().tier());
			}
		}
	}

	/** Counts one denial of an identity by a policy's own limits. */
	public void record(String policy, String identity) {
		record(policy, identity, null);
	}

	/** Counts one denial of an identity (kept in its stored form) by a policy, under a tier's limits or none. */
	public void record(String policy, String identity, @Nullable String tier) {
		long now = this.nanoTime.getAsLong();
		Halves halves = this.policies.get(policy);
		if (halves == null) {
			halves = this.policies.computeIfAbsent(policy, (name) -> new Halves(now));
		}
		halves.at(now).current().add(RateLimitKeys.safeIdentity(identity), tier);
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
		Window both = halves.at(this.nanoTime.getAsLong());
		Summary merged = Summary.merge(List.of(summary(both.current()), summary(both.previous())), this.capacity);
		return new Summary(merged.denials(), merged.identities(), merged.tiers(), 1);
	}

	private static Summary summary(HeavyHitters half) {
		Map<String, Long> counts = new LinkedHashMap<>();
		Map<String, String> tiers = new HashMap<>();
		half.items().forEach((counted) -> {
			counts.put(counted.item(), counted.count());
			if (counted.tag() != null) {
				tiers.put(counted.item(), counted.tag());
			}
		});
		return new Summary(half.total(), counts, tiers, 1);
	}

	/** {@return the counters kept over every policy and half: at most twice the capacity per policy} */
	public int counters() {
		int counters = 0;
		for (Halves halves : this.policies.values()) {
			Window both = halves.at(this.nanoTime.getAsLong());
			counters += both.current().size() + both.previous().size();
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
					halves.forget(RateLimitKeys.safeIdentity(identity));
				}
			});
		}
		this.resetHook.run();
	}

	/**
	 * A policy's two halves, swapped whole so that a reader never sees a half twice or a half and a start that do not
	 * belong together: the counting one, the one before it, and when the counting one started.
	 */
	private record Window(HeavyHitters current, HeavyHitters previous, long started) {
	}

	/** The halves of a policy's window; the counting one turns into the previous one every half window. */
	private final class Halves {

		private volatile Window window;

		Halves(long now) {
			this.window = new Window(fresh(), fresh(), now);
		}

		/** {@return the halves at {@code now}, moved on by whole halves when one or more have ended} */
		Window at(long now) {
			Window seen = this.window;
			return (now - seen.started() < TopDenials.this.halfNanos) ? seen : rotate(now);
		}

		/** Swaps the halves whole, under this object's lock (taken once per half window). */
		private synchronized Window rotate(long now) {
			Window seen = this.window;
			long ended = (now - seen.started()) / TopDenials.this.halfNanos;
			if (ended < 1) {
				return seen; // another thread rotated
			}
			// after two halves or more without a denial, nothing recent enough is left
			this.window = new Window(fresh(), (ended == 1) ? seen.current() : fresh(),
					seen.started() + ended * TopDenials.this.halfNanos);
			return this.window;
		}

		private HeavyHitters fresh() {
			return new HeavyHitters(TopDenials.this.capacity);
		}

		void forget(String identity) {
			Window both = this.window;
			both.current().removeIf(identity::equals);
			both.previous().removeIf(identity::equals);
		}

	}

	/**
	 * Denials of a policy over the window: their number and the most refused identities with their counts, the
	 * highest first. Estimates: each half's count may exceed the true one (by at most its denials divided by the
	 * capacity), and a half or instance that evicted the identity adds nothing for it, so a sum may be below the truth.
	 *
	 * @param denials the policy's denials counted
	 * @param identities the most refused identities and their denials
	 * @param tiers the tier whose limits refused an identity, for the identities a tier's limits refused
	 * @param instances how many instances' summaries this one combines
	 */
	public record Summary(long denials, Map<String, Long> identities, Map<String, String> tiers, int instances) {

		/** No denial. */
		public static final Summary EMPTY = new Summary(0, Map.of(), Map.of(), 0);

		/** A summary published by a version without tiers reads as one without. */
		public Summary {
			tiers = (tiers != null) ? tiers : Map.of();
		}

		/** {@return summaries added up: counts summed per identity, the {@code capacity} highest kept} */
		public static Summary merge(List<Summary> summaries, int capacity) {
			long denials = 0;
			int instances = 0;
			Map<String, Long> counts = new HashMap<>();
			Map<String, String> tiers = new HashMap<>();
			for (Summary summary : summaries) {
				denials += summary.denials();
				instances += summary.instances();
				summary.identities().forEach((identity, count) -> counts.merge(identity, count, Long::sum));
				summary.tiers().forEach(tiers::putIfAbsent);
			}
			Map<String, Long> top = new LinkedHashMap<>();
			counts.entrySet()
				.stream()
				.sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
				.limit(capacity)
				.forEachOrdered((entry) -> top.put(entry.getKey(), entry.getValue()));
			tiers.keySet().retainAll(top.keySet());
			return new Summary(denials, top, tiers, instances);
		}

	}

}
