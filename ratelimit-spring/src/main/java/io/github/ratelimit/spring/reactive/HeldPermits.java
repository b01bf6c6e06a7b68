package io.github.ratelimit.spring.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.Permit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The concurrency permits one exchange holds until it completes: {@link #hold(Permit) held} as decisions admit it,
 * all {@link #close() released} once, and released at once when taken after that (a check still in flight when the
 * client went away).
 */
final class HeldPermits {

	private static final Log logger = LogFactory.getLog(HeldPermits.class);

	private final List<Permit> permits = new CopyOnWriteArrayList<>();

	private boolean closed;

	/**
	 * Holds a permit until {@link #close()}; once closed, releases it instead.
	 * @param permit the permit of an admitted decision
	 * @return completes once held (or released)
	 */
	Mono<Void> hold(Permit permit) {
		synchronized (this) {
			if (!this.closed) {
				if (permit.holdsAny()) {
					this.permits.add(permit);
				}
				return Mono.empty();
			}
		}
		return release(permit);
	}

	/**
	 * Whether {@link #close()} ran.
	 * @return true once closed
	 */
	synchronized boolean isClosed() {
		return this.closed;
	}

	/**
	 * The permits held.
	 * @return the live list
	 */
	List<Permit> live() {
		return this.permits;
	}

	/**
	 * Releases every permit held, once. Never fails; a failed release is logged (the backend reclaims the permit
	 * after its window).
	 * @return completes once released
	 */
	Mono<Void> close() {
		List<Permit> held;
		synchronized (this) {
			if (this.closed) {
				return Mono.empty();
			}
			this.closed = true;
			held = new ArrayList<>(this.permits);
		}
		if (held.isEmpty()) {
			return Mono.empty();
		}
		return Flux.fromIterable(held).flatMap(HeldPermits::release).then();
	}

	/**
	 * Releases one permit. Never fails; a failed release is logged.
	 * @param permit the permit
	 * @return completes once released
	 */
	static Mono<Void> release(Permit permit) {
		if (permit == Permit.NONE) {
			return Mono.empty();
		}
		return permit.releaseAsync().onErrorResume((ex) -> {
			logger.warn("Could not release a rate-limit permit; it is reclaimed after its policy's window", ex);
			return Mono.empty();
		});
	}

}
