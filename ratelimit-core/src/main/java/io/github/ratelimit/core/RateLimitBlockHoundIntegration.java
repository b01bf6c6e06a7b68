package io.github.ratelimit.core;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound, when an application installs it, which waits of this library on non-blocking threads are short
 * critical sections in memory, not I/O: found through {@link java.util.ServiceLoader}, like Reactor's and Netty's own
 * integrations. Nothing is allowed that talks to Redis.
 * <ul>
 * <li>Resilience4j's circuit breaker guards its sliding window of outcomes and its state transitions with a
 * {@code ReentrantLock} held for a few arithmetic operations; a decision asks it for permission and records its
 * outcome on whatever thread the decision completes on (an event loop).</li>
 * </ul>
 */
public final class RateLimitBlockHoundIntegration implements BlockHoundIntegration {

	private static final String CIRCUIT_BREAKER = "io.github.resilience4j.circuitbreaker.internal.CircuitBreakerStateMachine";

	@Override
	public void applyTo(BlockHound.Builder builder) {
		for (String method : new String[] { "tryAcquirePermission", "acquirePermission", "releasePermission",
				"onSuccess", "onError", "onResult", "transitionToOpenState", "transitionToHalfOpenState",
				"transitionToClosedState" }) {
			builder.allowBlockingCallsInside(CIRCUIT_BREAKER, method);
		}
	}

}
