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
 * <li>Caffeine, which holds the local backend's state and the denial cache, drains its buffers and expires entries under its own
 * {@code ReentrantLock}; a write normally hands that work over without waiting, but when its write buffer stays full
 * (many writers on few cores) the writer takes the lock and does the in-memory maintenance itself. The local
 * backend's own striped locks are never waited for on a non-blocking thread: it only tries them.</li>
 * </ul>
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
