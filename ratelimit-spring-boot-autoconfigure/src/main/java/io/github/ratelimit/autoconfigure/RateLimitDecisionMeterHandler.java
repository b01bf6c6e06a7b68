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
 * Counts {@value #DECISIONS} once per policy of every observed decision, tagged {@code policy} (the policy's name)
 * and {@code outcome} ({@link DefaultRateLimitObservationConvention#outcome(PolicyDecision)}: {@code allowed},
 * {@code denied}, {@code shadow_denied} (a shadow policy that would have denied), {@code failed_open},
 * {@code failed_closed}, {@code local_allowed}, {@code local_denied}, or {@code error} when the limiter threw). The number of series is bounded by the configured policies.
 */
public final class RateLimitDecisionMeterHandler implements ObservationHandler<RateLimitObservationContext> {

	/** The name of the counter. */
	public static final String DECISIONS = "ratelimit.decisions";

	private final ObjectProvider<MeterRegistry> meterRegistry;

	/**
	 * A handler counting in the application's meter registry, looked up when first needed.
	 * @param meterRegistry the meter registry
	 */
	public RateLimitDecisionMeterHandler(ObjectProvider<MeterRegistry> meterRegistry) {
		this.meterRegistry = meterRegistry;
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
					count(registry, policy.name(), DefaultRateLimitObservationConvention.ERROR);
				}
			}
			return;
		}
		for (PolicyDecision each : decision.decisions()) {
			count(registry, each.policy().name(), DefaultRateLimitObservationConvention.outcome(each));
		}
		for (PolicyDecision shadow : decision.shadowDecisions()) {
			count(registry, shadow.policy().name(), DefaultRateLimitObservationConvention.outcome(shadow));
		}
	}

	private static void count(MeterRegistry registry, String policy, String outcome) {
		Counter.builder(DECISIONS)
			.description("Rate-limit decisions, one per policy checked")
			.tag("policy", policy)
			.tag("outcome", outcome)
			.register(registry)
			.increment();
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitObservationContext;
	}

}
