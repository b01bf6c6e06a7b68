package io.github.ratelimit.core.local;

import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest.Entry;

/** One entry under evaluation, the twin of the Lua scripts' table {@code c}: doubles, as in Lua. */
final class Eval {

	final double limit;

	final double window;

	final double burst;

	final double cost;

	final double min;

	final double now;

	final String rid;

	/** The first sequence number of the sorted sets' members: set by a commit, passed back to a refund; 0 for none. */
	long seq;

	/** Whether the time is explicit (tests, replays): TTLs then have a floor, as in the scripts. */
	final boolean explicitTime;

	boolean ok;

	/** Remaining and reset-after before taking the cost. */
	double rb;

	double zb;

	/** Remaining and reset-after once the cost is taken. */
	double ra;

	double za;

	double retry;

	/** Scratch values carried from check to commit. */
	double next;

	double current;

	double count;

	double previous;

	double elapsed;

	/** The time the state is read at when the clock went back (a state written later than now). */
	double at;

	/** How far the state's time is ahead of now (0 unless the clock went back). */
	double ahead;

	double length;

	/** Whether check rewrote the state in the current policy's terms (a changed window): it must be stored again. */
	boolean rewritten;

	Eval(Entry entry, double now, String rid, boolean explicitTime) {
		RateLimitPolicy policy = entry.policy();
		this.limit = policy.limit();
		this.window = policy.windowMicros();
		this.burst = policy.burst();
		this.cost = entry.cost();
		this.min = policy.minIntervalMicros();
		this.now = now;
		this.rid = rid;
		this.explicitTime = explicitTime;
	}

}
