package io.github.ratelimit.core;

import java.util.concurrent.atomic.LongAdder;

/** The backend errors of a guarded limiter, by kind. */
final class ErrorCounts {

	private final LongAdder[] counts = new LongAdder[BackendErrorKind.values().length];

	ErrorCounts() {
		for (int i = 0; i < this.counts.length; i++) {
			this.counts[i] = new LongAdder();
		}
	}

	void add(BackendErrorKind kind) {
		this.counts[kind.ordinal()].increment();
	}

	void add(BackendErrorKind kind, int times) {
		if (times > 0) {
			this.counts[kind.ordinal()].add(times);
		}
	}

	long count(BackendErrorKind kind) {
		return this.counts[kind.ordinal()].sum();
	}

}
