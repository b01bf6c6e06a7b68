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
 * The permits one exchange holds until it completes, all released once by {@link #close()}; one held after that (a
 * check in flight when the client left) is released at once.
 */
final class HeldPermits {

	private static final Log logger = LogFactory.getLog(HeldPermits.class);

	private final List<Permit> permits = new CopyOnWriteArrayList<>();

	private boolean closed;

	/** Holds a permit until {@link #close()}; once closed, releases it instead. */
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

	synchronized boolean isClosed() {
		return this.closed;
	}

	List<Permit> live() {
		return this.permits;
	}

	/** Releases every permit held, once; never fails (the backend reclaims a permit after its window). */
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

	/** Releases one permit; never fails (a failed release is logged). */
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
