package io.github.ratelimit.core;

/**
 * Requests at explicit times, shared by the engine tests.
 */
final class Requests {

	private Requests() {
	}

	/** One request of the given cost at an explicit time. */
	static RateLimitDecision at(RateLimiter limiter, long time, RateLimitPolicy policy, String identity, long cost) {
		return limiter.check(RateLimitRequest.builder().add(policy, identity, cost).at(time).build());
	}

	/** Requests of cost 1 at one time until one is denied (or max pass); returns how many were admitted. */
	static int admitAll(RateLimiter limiter, long time, RateLimitPolicy policy, String identity, int max) {
		int admitted = 0;
		while (admitted < max && at(limiter, time, policy, identity, 1).allowed()) {
			admitted++;
		}
		return admitted;
	}

}
