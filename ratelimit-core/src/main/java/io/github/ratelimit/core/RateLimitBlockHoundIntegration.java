package io.github.ratelimit.core;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * BlockHound's allowances (a {@link java.util.ServiceLoader} service) for short in-memory locks: Resilience4j's circuit
 * breaker and Caffeine's maintenance (architecture, "Breaker accounting").
 */
public final class RateLimitBlockHoundIntegration implements BlockHoundIntegration {

	private static final String CIRCUIT_BREAKER = "io.github.resilience4j.circuitbreaker.internal.CircuitBreakerStateMachine";

	private static final String CAFFEINE_CACHE = "com.github.benmanes.caffeine.cache.BoundedLocalCache";

	@Override
	public void applyTo(BlockHound.Builder builder) {
		for (String method : new String[] { "tryAcquirePermission", "acquirePermission", "releasePermission",
				"onSuccess", "onError", "onResult", "transitionToOpenState", "transitionToHalfOpenState",
				"transitionToClosedState" }) {
			builder.allowBlockingCallsInside(CIRCUIT_BREAKER, method);
		}
		builder.allowBlockingCallsInside(CAFFEINE_CACHE, "afterWrite");
		builder.allowBlockingCallsInside(CAFFEINE_CACHE, "performCleanUp");
	}

}
