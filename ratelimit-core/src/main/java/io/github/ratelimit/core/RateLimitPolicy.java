package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * An immutable, validated rate-limit policy: which algorithm, how many requests per window, and the options of that
 * algorithm. Build one with {@link #builder(String)}; invalid values fail with an {@link InvalidPolicyException} that
 * names the field.
 */
public final class RateLimitPolicy {

	/** Largest accepted limit, burst and cost: keeps every computation exact in double precision. */
	public static final long MAX_LIMIT = 1_000_000_000L;

	/** Longest accepted window. */
	public static final Duration MAX_WINDOW = Duration.ofDays(366);

	/** Shortest accepted window. */
	public static final Duration MIN_WINDOW = Duration.ofMillis(1);

	/** Largest limit of the algorithms that keep an entry per request ({@link Algorithm#keepsEntries()}). */
	public static final long MAX_ENTRY_LIMIT = 100_000L;

	/** Longest refill of a whole burst ({@code burst * window / limit}), 2^52 µs: durations stay exact doubles. */
	public static final double MAX_HORIZON_MICROS = 0x1p52;

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

	private final String name;

	private final Algorithm algorithm;

	private final long limit;

	private final Duration window;

	private final long burst;

	private final Duration minInterval;

	private final long cost;

	private final FailureMode failureMode;

	private final boolean shadow;

	private final @Nullable String tier;

	private RateLimitPolicy(Builder builder) {
		this.name = validateName(builder.name);
		if (builder.algorithm == null) {
			throw new InvalidPolicyException(this.name, "algorithm", "is required");
		}
		this.algorithm = builder.algorithm;
		this.limit = positive("limit", builder.limit);
		if (builder.window == null) {
			throw new InvalidPolicyException(this.name, "window", "is required");
		}
		if (builder.window.compareTo(MIN_WINDOW) < 0 || builder.window.compareTo(MAX_WINDOW) > 0) {
			throw new InvalidPolicyException(this.name, "window",
					"must be between " + MIN_WINDOW + " and " + MAX_WINDOW + " but was " + builder.window);
		}
		this.window = builder.window;
		if (builder.burst != null && !this.algorithm.supportsBurst()) {
			throw new InvalidPolicyException(this.name, "burst",
					"applies to " + Algorithm.ids(Algorithm::supportsBurst, " and ") + " only, not to "
							+ this.algorithm.id());
		}
		this.burst = (builder.burst != null) ? positive("burst", builder.burst) : this.limit;
		Duration minInterval = (builder.minInterval != null) ? builder.minInterval : Duration.ZERO;
		if (!minInterval.isZero() && !this.algorithm.supportsMinInterval()) {
			throw new InvalidPolicyException(this.name, "min-interval", "applies to "
					+ Algorithm.ids(Algorithm::supportsMinInterval, " and ") + " only, not to " + this.algorithm.id());
		}
		if (minInterval.isNegative() || minInterval.compareTo(this.window) > 0) {
			throw new InvalidPolicyException(this.name, "min-interval",
					"must be between 0 and the window (" + this.window + ") but was " + minInterval);
		}
		this.minInterval = minInterval;
		if (this.algorithm.keepsEntries() && this.limit > MAX_ENTRY_LIMIT) {
			throw new InvalidPolicyException(this.name, "limit", "must be at most " + MAX_ENTRY_LIMIT + " for "
					+ this.algorithm.id() + " (one entry per request is kept) but was " + this.limit);
		}
		if ((double) this.burst * windowMicros() / this.limit > MAX_HORIZON_MICROS) {
			throw new InvalidPolicyException(this.name, "burst", "of " + this.burst + " takes longer than 142 years "
					+ "to refill at " + this.limit + " per " + this.window + "; lower the burst or raise the limit");
		}
		this.cost = positive("cost", builder.cost);
		if (this.cost > capacity()) {
			throw new InvalidPolicyException(this.name, "cost",
					"must not exceed the capacity " + capacity() + " but was " + this.cost);
		}
		this.failureMode = builder.failureMode;
		this.shadow = builder.shadow;
		this.tier = builder.tier;
	}

	private static String validateName(@Nullable String name) {
		if (name == null || !NAME.matcher(name).matches()) {
			throw new InvalidPolicyException(String.valueOf(name), "name",
					"must be 1 to 64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
		return name;
	}

	private long positive(String field, long value) {
		if (value < 1 || value > MAX_LIMIT) {
			throw new InvalidPolicyException(this.name, field,
					"must be between 1 and " + MAX_LIMIT + " but was " + value);
		}
		return value;
	}

	/** {@return a builder of a policy of this name: 1 to 64 letters, digits, '.', '_', '-'} */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/** {@return a builder that starts from this policy's values} */
	public Builder toBuilder() {
		Builder builder = new Builder(this.name).algorithm(this.algorithm)
			.limit(this.limit)
			.window(this.window)
			.cost(this.cost)
			.failureMode(this.failureMode)
			.shadow(this.shadow)
			.tier(this.tier);
		if (this.algorithm.supportsBurst()) {
			builder.burst(this.burst);
		}
		if (!this.minInterval.isZero()) {
			builder.minInterval(this.minInterval);
		}
		return builder;
	}

	/**
	 * {@return this policy with some limits replaced (an override or tier), this one when they replace nothing}
	 * A burst that followed the limit (token bucket and GCRA without a burst of their own) follows a new limit too.
	 * @throws InvalidPolicyException naming the field when a value is invalid for this policy
	 */
	public RateLimitPolicy with(Limits limits) {
		if (limits.isEmpty()) {
			return this;
		}
		// a burst that followed the limit (or has no meaning) stays unset, so that it follows the new limit
		Long ownBurst = (this.algorithm.supportsBurst() && this.burst != this.limit) ? this.burst : null;
		Limits merged = limits.orElse(new Limits(this.limit, this.window, ownBurst, this.minInterval));
		Builder builder = toBuilder();
		builder.limit = Objects.requireNonNull(merged.limit());
		builder.window = merged.window();
		builder.burst = merged.burst();
		builder.minInterval = merged.minInterval();
		return builder.build();
	}

	public String name() {
		return this.name;
	}

	public Algorithm algorithm() {
		return this.algorithm;
	}

	/** {@return requests admitted per window (for {@link Algorithm#CONCURRENCY}: requests in flight)} */
	public long limit() {
		return this.limit;
	}

	/** {@return the window (for {@link Algorithm#CONCURRENCY}: the longest a permit is held)} */
	public Duration window() {
		return this.window;
	}

	/** {@return the bucket capacity of token bucket and GCRA (by default the limit); the limit for the others} */
	public long burst() {
		return this.burst;
	}

	/** {@return the minimum time between two admitted requests of a key (sliding window log), zero when unset} */
	public Duration minInterval() {
		return this.minInterval;
	}

	/** {@return the default cost of one request} */
	public long cost() {
		return this.cost;
	}

	/** {@return what the policy does when its backend cannot decide, {@link FailureMode#OPEN} unless set} */
	public FailureMode failureMode() {
		return this.failureMode;
	}

	/** {@return whether the policy is in shadow mode: counted apart, in {@link RateLimitDecision#shadowDecisions()}} */
	public boolean shadow() {
		return this.shadow;
	}

	/**
	 * {@return the name of the configured tier whose limits this policy carries, null when no tier set them} Kept by
	 * {@link #with(Limits)}, so a runtime override on top of a tier's limits still names the tier (for meters).
	 */
	public @Nullable String tier() {
		return this.tier;
	}

	/** {@return the most a request may cost: the burst for token bucket and GCRA, the limit otherwise} */
	public long capacity() {
		return this.algorithm.supportsBurst() ? this.burst : this.limit;
	}

	/** {@return the window in microseconds, the unit of the scripts} */
	public long windowMicros() {
		return toMicros(this.window);
	}

	/** {@return the minimum interval in microseconds} */
	public long minIntervalMicros() {
		return toMicros(this.minInterval);
	}

	static long toMicros(Duration duration) {
		return duration.getSeconds() * 1_000_000L + duration.getNano() / 1_000L;
	}

	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		if (!(other instanceof RateLimitPolicy that)) {
			return false;
		}
		return this.limit == that.limit && this.burst == that.burst && this.cost == that.cost
				&& this.name.equals(that.name) && this.algorithm == that.algorithm && this.window.equals(that.window)
				&& this.minInterval.equals(that.minInterval) && this.failureMode == that.failureMode
				&& this.shadow == that.shadow && Objects.equals(this.tier, that.tier);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.name, this.algorithm, this.limit, this.window, this.burst, this.minInterval,
				this.cost, this.failureMode, this.shadow, this.tier);
	}

	@Override
	public String toString() {
		return "RateLimitPolicy[" + this.name + ": " + this.algorithm.id() + " " + this.limit + "/" + this.window
				+ (this.algorithm.supportsBurst() ? " burst " + this.burst : "")
				+ (this.minInterval.isZero() ? "" : " min-interval " + this.minInterval)
				+ (this.cost == 1 ? "" : " cost " + this.cost)
				+ (this.failureMode == FailureMode.OPEN ? "" : " failure-mode " + this.failureMode.id())
				+ (this.shadow ? " shadow" : "") + ((this.tier != null) ? " tier " + this.tier : "") + "]";
	}

	/**
	 * Limits replacing some of a policy's own ({@link #with(Limits)}); each value left null keeps the policy's.
	 *
	 * @param limit requests admitted per window
	 * @param window the window length
	 * @param burst the bucket capacity (token bucket and GCRA)
	 * @param minInterval the minimum time between two requests of one key (sliding window log)
	 */
	public record Limits(@Nullable Long limit, @Nullable Duration window, @Nullable Long burst,
			@Nullable Duration minInterval) {

		/** {@return whether these limits replace nothing} */
		public boolean isEmpty() {
			return this.limit == null && this.window == null && this.burst == null && this.minInterval == null;
		}

		/** {@return these limits, each value left null taken from {@code others}} */
		public Limits orElse(Limits others) {
			return new Limits((this.limit != null) ? this.limit : others.limit,
					(this.window != null) ? this.window : others.window,
					(this.burst != null) ? this.burst : others.burst,
					(this.minInterval != null) ? this.minInterval : others.minInterval);
		}

	}

	/** Builds a {@link RateLimitPolicy}; {@link #build()} validates. */
	public static final class Builder {

		private final String name;

		private @Nullable Algorithm algorithm;

		private long limit;

		private @Nullable Duration window;

		private @Nullable Long burst;

		private @Nullable Duration minInterval;

		private long cost = 1;

		private FailureMode failureMode = FailureMode.OPEN;

		private boolean shadow;

		private @Nullable String tier;

		private Builder(String name) {
			this.name = name;
		}

		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
			return this;
		}

		public Builder limit(long limit) {
			this.limit = limit;
			return this;
		}

		public Builder window(Duration window) {
			this.window = window;
			return this;
		}

		public Builder burst(long burst) {
			this.burst = burst;
			return this;
		}

		public Builder minInterval(Duration minInterval) {
			this.minInterval = minInterval;
			return this;
		}

		public Builder cost(long cost) {
			this.cost = cost;
			return this;
		}

		/** What the policy does when its backend cannot decide; {@link FailureMode#OPEN} by default. */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
			return this;
		}

		/** Whether the policy runs in shadow mode (checked and counted, never denying); off by default. */
		public Builder shadow(boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		/** The configured tier whose limits the policy carries (null: none); it changes no decision. */
		public Builder tier(@Nullable String tier) {
			this.tier = tier;
			return this;
		}

		/**
		 * {@return the policy, validated}
		 * @throws InvalidPolicyException naming the first invalid field
		 */
		public RateLimitPolicy build() {
			return new RateLimitPolicy(this);
		}

	}

}
