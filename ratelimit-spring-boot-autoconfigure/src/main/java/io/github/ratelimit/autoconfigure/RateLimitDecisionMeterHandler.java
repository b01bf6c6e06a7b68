package io.github.ratelimit.autoconfigure;

import java.util.stream.Stream;

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
 * Counts {@value #DECISIONS} once per policy of every observed decision, tagged {@code policy} and {@code outcome}
 * ({@link DefaultRateLimitObservationConvention#outcome(PolicyDecision)}, or {@code error} when the limiter threw).
 */
public final class RateLimitDecisionMeterHandler implements ObservationHandler<RateLimitObservationContext> {

	/** The name of the counter. */
	public static final String DECISIONS = "ratelimit.decisions";

	private final ObjectProvider<MeterRegistry> meterRegistry;

	/** @param meterRegistry the application's meter registry, looked up when first needed */
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
		Stream.concat(decision.decisions().stream(), decision.shadowDecisions().stream())
			.forEach((each) -> count(registry, each.policy().name(),
					DefaultRateLimitObservationConvention.outcome(each)));
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
