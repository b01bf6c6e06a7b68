package io.github.ratelimit.core.redis;

import java.util.List;

import io.github.ratelimit.core.RateLimitPolicy;

/**
 * The arguments of a {@code scripts/lease.lua} call and its reply, in the layout described at the top of the script
 * (keep the two in step).
 */
final class LeaseCall {

	private LeaseCall() {
	}

	/** A take of up to {@code want}, granting nothing unless at least {@code need} is there. */
	static String[] take(RateLimitPolicy policy, String instance, long held, long heldWindow, long want, long need,
			long lapseMicros, long number) {
		return args("t", policy, instance, held, heldWindow, want, need, lapseMicros, number);
	}

	/** A give-back of what the instance still holds of its slice (0 clears its record), numbered like takes. */
	static String[] giveBack(RateLimitPolicy policy, String instance, long held, long heldWindow, long number) {
		return args("g", policy, instance, held, heldWindow, 0, 0, 0, number);
	}

	private static String[] args(String mode, RateLimitPolicy policy, String instance, long held, long heldWindow,
			long want, long need, long lapseMicros, long number) {
		return new String[] { mode, policy.algorithm().code(), Long.toString(policy.limit()),
				Long.toString(policy.windowMicros()), Long.toString(policy.burst()), instance, Long.toString(held),
				Long.toString(heldWindow), Long.toString(want), Long.toString(need), Long.toString(lapseMicros),
				Long.toString(number) };
	}

	/**
	 * What a call answered.
	 * @param take whether the call was a take (else a give-back)
	 * @param timeMicros the server's time
	 * @param granted what the take added to the slice
	 * @param kept of what the instance held, what is still its own (0 when its slice lapsed or its window ended)
	 * @param remaining what Redis has left to give (the token bucket: not counting slices on record)
	 * @param resetAfterMicros fixed window: until the window ends; token bucket: until it is full if nobody held any
	 * @param retryAfterMicros when nothing was granted, when a take of {@code need} may succeed
	 * @param lapseAfterMicros how long the slice may be spent from the call on; -1 when unchanged
	 * @param windowStart the start of the slice's window (fixed window; 0 otherwise)
	 */
	record Reply(boolean take, long timeMicros, long granted, long kept, long remaining, long resetAfterMicros,
			long retryAfterMicros, long lapseAfterMicros, long windowStart) {

		static Reply of(boolean take, List<Long> reply) {
			return new Reply(take, reply.get(0), reply.get(1), reply.get(2), reply.get(3), reply.get(4), reply.get(5),
					reply.get(6), reply.get(7));
		}

	}

}
