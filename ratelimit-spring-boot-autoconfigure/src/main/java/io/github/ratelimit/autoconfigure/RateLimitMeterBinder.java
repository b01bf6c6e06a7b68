package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.BackendErrorKind;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds what a {@link DefaultRateLimiter} counts in memory: {@value #ERRORS} (a counter per
 * {@link BackendErrorKind}, tag {@code kind}) and {@value #PERMITS_ACTIVE} (a gauge per configured policy that holds
 * concurrency permits, tag {@code policy}: the permits this instance holds, in units of cost). A limiter of another
 * type has neither.
 */
public final class RateLimitMeterBinder implements MeterBinder {

	/** The name of the counter of backend errors. */
	public static final String ERRORS = "ratelimit.errors";

	/** The name of the gauge of concurrency permits held. */
	public static final String PERMITS_ACTIVE = "ratelimit.permits.active";

	private final ObjectProvider<RateLimiter> limiter;

	private final ObjectProvider<RateLimitPolicyRegistry> policies;

	/**
	 * A binder of the application's limiter, looked up when bound.
	 * @param limiter the limiter
	 * @param policies the configured policies, for the permit gauges
	 */
	public RateLimitMeterBinder(ObjectProvider<RateLimiter> limiter, ObjectProvider<RateLimitPolicyRegistry> policies) {
		this.limiter = limiter;
		this.policies = policies;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		if (!(this.limiter.getIfUnique() instanceof DefaultRateLimiter limiter)) {
			return;
		}
		for (BackendErrorKind kind : BackendErrorKind.values()) {
			FunctionCounter.builder(ERRORS, limiter, (counted) -> counted.errorCount(kind))
				.description("Rate-limit backend errors by kind; decisions were made by the failure modes")
				.tag("kind", kind.tagValue())
				.register(registry);
		}
		RateLimitPolicyRegistry policies = this.policies.getIfUnique();
		if (policies == null) {
			return;
		}
		for (ConfiguredPolicy policy : policies.all()) {
			if (policy.policy().algorithm().holdsPermits()) {
				String name = policy.name();
				Gauge.builder(PERMITS_ACTIVE, limiter, (counted) -> counted.permitsInFlight(name))
					.description("Concurrency permits this instance holds (acquired, not yet released)")
					.tag("policy", name)
					.register(registry);
			}
		}
	}

}
