package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimitObservationConvention;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitObservationContext;
import io.github.ratelimit.core.RateLimitPolicy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Counts {@value #DECISIONS} once per policy of every observed decision, tagged {@code policy}, {@code outcome}
 * ({@link DefaultRateLimitObservationConvention#outcome(PolicyDecision)}, or {@code error} when the limiter threw)
 * and {@code tier} (the configured tier that set the policy's limits, {@value #NO_TIER} when none did); and
 * {@value #NEAR_LIMIT}, tagged {@code policy} and {@code tier}, once per policy decision of an admitted request that
 * admits and leaves less than the near-limit ratio of the policy's capacity remaining.
 */
public final class RateLimitDecisionMeterHandler implements ObservationHandler<RateLimitObservationContext> {

	/** The name of the decisions counter. */
	public static final String DECISIONS = "ratelimit.decisions";

	/** The name of the near-limit counter. */
	public static final String NEAR_LIMIT = "ratelimit.near.limit";

	/** The {@code tier} tag of a decision under limits no tier set. */
	public static final String NO_TIER = "none";

	/** The near-limit ratio unless configured ({@code ratelimit.metrics.near-limit-ratio}). */
	public static final double DEFAULT_NEAR_LIMIT_RATIO = 0.2;

	private final ObjectProvider<MeterRegistry> meterRegistry;

	private final double nearLimitRatio;

	/** @param meterRegistry the application's meter registry, looked up when first needed */
	public RateLimitDecisionMeterHandler(ObjectProvider<MeterRegistry> meterRegistry) {
		this(meterRegistry, DEFAULT_NEAR_LIMIT_RATIO);
	}

	/**
	 * @param meterRegistry the application's meter registry, looked up when first needed
	 * @param nearLimitRatio the share of a policy's capacity below which an admission's remaining quota counts as
	 * near the limit; 0 counts none
	 * @throws IllegalArgumentException when the ratio is not at least 0 and below 1
	 */
	public RateLimitDecisionMeterHandler(ObjectProvider<MeterRegistry> meterRegistry, double nearLimitRatio) {
		if (!(nearLimitRatio >= 0 && nearLimitRatio < 1)) {
			throw new IllegalArgumentException(
					"nearLimitRatio must be at least 0 and below 1 but was " + nearLimitRatio);
		}
		this.meterRegistry = meterRegistry;
		this.nearLimitRatio = nearLimitRatio;
	}

	@Override
	public void onStop(RateLimitObservationContext context) {
		MeterRegistry registry = this.meterRegistry.getIfAvailable();
		if (registry == null) {
			return;
		}
		RateLimitDecision decision = context.decision();
		if (decision == null) {
			// the limiter threw (counted as error), or the subscriber cancelled before a decision (nothing decided)
			if (context.getError() != null) {
				for (RateLimitPolicy policy : context.policies()) {
					count(registry, policy, DefaultRateLimitObservationConvention.ERROR);
				}
			}
			return;
		}
		for (PolicyDecision each : decision.decisions()) {
			count(registry, decision, each);
		}
		for (PolicyDecision each : decision.shadowDecisions()) {
			count(registry, decision, each);
		}
	}

	private void count(MeterRegistry registry, RateLimitDecision decision, PolicyDecision each) {
		count(registry, each.policy(), DefaultRateLimitObservationConvention.outcome(each));
		if (decision.allowed() && nearLimit(each)) {
			Counter.builder(NEAR_LIMIT)
				.description("Admitted rate-limit decisions that left less than the near-limit ratio of the quota")
				.tag("policy", each.policy().name())
				.tag("tier", tier(each.policy()))
				.register(registry)
				.increment();
		}
	}

	/**
	 * Whether a policy's admission left less than the ratio of its capacity (the most its remaining figure can be:
	 * the burst of token bucket and GCRA, the limit otherwise, for concurrency the permits) for further requests.
	 * Only decisions with figures count: a policy that failed open checked nothing.
	 */
	private boolean nearLimit(PolicyDecision each) {
		return this.nearLimitRatio > 0 && each.allowed() && each.enforcement().hasFigures()
				&& each.remaining() < this.nearLimitRatio * each.policy().capacity();
	}

	private static void count(MeterRegistry registry, RateLimitPolicy policy, String outcome) {
		Counter.builder(DECISIONS)
			.description("Rate-limit decisions, one per policy checked")
			.tag("policy", policy.name())
			.tag("outcome", outcome)
			.tag("tier", tier(policy))
			.register(registry)
			.increment();
	}

	private static String tier(RateLimitPolicy policy) {
		String tier = policy.tier();
		return (tier != null) ? tier : NO_TIER;
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitObservationContext;
	}

}
