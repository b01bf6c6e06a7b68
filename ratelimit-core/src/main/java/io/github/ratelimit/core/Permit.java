package io.github.ratelimit.core;

import reactor.core.publisher.Mono;

/**
 * What a request holds of its {@link Algorithm#CONCURRENCY concurrency} policies, to give back when it completes.
 * Releasing is idempotent: only the first call has an effect. A permit that is never released is reclaimed once it
 * has been held longer than its policy's window.
 */
public interface Permit extends AutoCloseable {

	/** A permit that holds nothing. */
	Permit NONE = new Permit() {

		@Override
		public Mono<Void> releaseAsync() {
			return Mono.empty();
		}

		@Override
		public boolean holdsAny() {
			return false;
		}

	};

	/** Gives the permits back without blocking; completes once released. */
	Mono<Void> releaseAsync();

	/**
	 * Gives the permits back, waiting for {@link #releaseAsync}: at most a guarded limiter's time budget. An interrupt
	 * ends the wait, not the release, and throws nothing (the thread's flag stays set).
	 */
	default void release() {
		Waits.awaitRelease(releaseAsync());
	}

	/** {@return whether at least one concurrency permit is held} */
	boolean holdsAny();

	@Override
	default void close() {
		release();
	}

}
