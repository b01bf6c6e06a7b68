package io.github.ratelimit.core.redis;

import java.util.List;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitRequest.Entry;

/**
 * The call of a one-entry request with its policy's own script ({@link LuaScripts#forSingleEntry}), in the layout
 * described at the top of {@code scripts/single-call.lua} (keep the two in step). An admission's retry-after is
 * {@link Acquisition#exhaustedForMicros()}.
 * @param scripts the scripts of the call's policy, which a batch shares
 * @param args ARGV: the cost, then the explicit time if there is one
 */
@SuppressWarnings("ArrayRecordComponent") // never compared: a call is sent once
record SingleEntryCall(LuaScripts.PolicyScripts scripts, String key, Entry entry, String[] args) {

	private static final int TIME = 0;

	private static final int ADMITS = 1;

	private static final int REMAINING = 2;

	private static final int RESET_AFTER = 3;

	private static final int RETRY_AFTER = 4;

	private static final int SEQUENCE = 5;

	static SingleEntryCall of(LuaScripts.PolicyScripts scripts, String key, Entry entry, long explicitTimeMicros) {
		String cost = Long.toString(entry.cost());
		String[] args = (explicitTimeMicros >= 0) ? new String[] { cost, Long.toString(explicitTimeMicros) }
				: new String[] { cost };
		return new SingleEntryCall(scripts, key, entry, args);
	}

	/** Whether the call passes its own time (then it is never batched: a batch has one time, the server's). */
	boolean explicitTime() {
		return this.args.length == 2;
	}

	String cost() {
		return this.args[0];
	}

	/** How many figures the script answers after the time: four, and the sequence number where entries are kept. */
	int figures() {
		return this.entry.policy().algorithm().keepsEntries() ? 5 : 4;
	}

	EncodedCall encoded() {
		return EncodedCall.of(this.scripts.single(), List.of(this.key), this.args);
	}

	Acquisition acquisition(List<Long> reply) {
		boolean admits = reply.get(ADMITS) == 1L;
		PolicyDecision decision = PolicyDecision.of(this.entry, admits, reply.get(REMAINING), reply.get(RESET_AFTER),
				reply.get(RETRY_AFTER));
		// an admission's retry-after figure says how long the quota it leaves denies a request of cost 1
		long exhaustedFor = admits ? Math.max(0, reply.get(RETRY_AFTER)) : 0;
		long time = reply.get(TIME);
		long sequence = (reply.size() > SEQUENCE) ? reply.get(SEQUENCE) : 0;
		return new Acquisition(List.of(decision), time, List.of(time), List.of(sequence), 0, exhaustedFor);
	}

}
