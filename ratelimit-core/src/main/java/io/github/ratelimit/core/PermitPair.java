package io.github.ratelimit.core;

import reactor.core.publisher.Mono;

/** Two permits released together. */
record PermitPair(Permit first, Permit second) implements Permit {

	static Permit of(Permit first, Permit second) {
		if (first == Permit.NONE) {
			return second;
		}
		return (second == Permit.NONE) ? first : new PermitPair(first, second);
	}

	@Override
	public Mono<Void> releaseAsync() {
		return Mono.when(this.first.releaseAsync(), this.second.releaseAsync());
	}

	@Override
	public boolean holdsAny() {
		return this.first.holdsAny() || this.second.holdsAny();
	}

}
