package io.github.ratelimit.core;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * An {@link ObservationConvention} of rate-limit decisions, to replace {@link DefaultRateLimitObservationConvention}
 * (name, key values) on a {@link DefaultRateLimiter}.
 */
public interface RateLimitObservationConvention extends ObservationConvention<RateLimitObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitObservationContext;
	}

}
