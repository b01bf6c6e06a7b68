package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.BackendErrorKind;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds what a {@link DefaultRateLimiter} counts in memory: {@value #ERRORS} (per {@link BackendErrorKind}, tag
 * {@code kind}), {@value #PERMITS_ACTIVE} (permits this instance holds, in units of cost, tag {@code policy}) and,
 * with a {@link RateLimitDenialCache}, {@value #DENIAL_CACHE_HITS} and {@value #DENIAL_CACHE_SIZE}.
 */
public final class RateLimitMeterBinder implements MeterBinder {

	/** The name of the counter of backend errors. */
	public static final String ERRORS = "ratelimit.errors";

	/** The name of the gauge of concurrency permits held. */
	public static final String PERMITS_ACTIVE = "ratelimit.permits.active";

	/** The name of the counter of requests denied from the denial cache. */
	public static final String DENIAL_CACHE_HITS = "ratelimit.denial.cache.hits";

	/** The name of the gauge of the denials the denial cache holds. */
	public static final String DENIAL_CACHE_SIZE = "ratelimit.denial.cache.size";

	private final ObjectProvider<RateLimiter> limiter;

	private final ObjectProvider<RateLimitPolicyRegistry> policies;

	/**
	 * @param limiter the limiter, looked up when bound
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
		RateLimitDenialCache denials = limiter.denialCache();
		if (denials != null) {
			FunctionCounter.builder(DENIAL_CACHE_HITS, denials, RateLimitDenialCache::hitCount)
				.description("Requests denied from the local denial cache, without a backend call (also counted as "
						+ "denied decisions)")
				.register(registry);
			Gauge.builder(DENIAL_CACHE_SIZE, denials, RateLimitDenialCache::size)
				.description("Policy and identity pairs whose denial the local denial cache holds")
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
