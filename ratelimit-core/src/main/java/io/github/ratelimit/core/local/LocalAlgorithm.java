package io.github.ratelimit.core.local;

import org.jspecify.annotations.Nullable;

/**
 * One algorithm's twin of its Lua file: {@code check} reads, {@code commit} takes the cost, {@code refund} gives
 * back. A missing state is a fresh key.
 */
interface LocalAlgorithm {

	double EPS = 1e-12;

	/** A TTL floor under explicit time, as in the scripts. */
	long EXPLICIT_TTL_FLOOR_MS = 600_000;

	/**
	 * The tolerance for a quantity of magnitude up to {@code magnitude}: {@code tol()} in common.lua.
	 * @param magnitude the largest value compared
	 * @return the tolerance
	 */
	static double tol(double magnitude) {
		return EPS * Math.max(1, magnitude);
	}

	/**
	 * Evaluates the entry against the state; may drop expired parts of the state (as ZREMRANGEBYSCORE does) but
	 * changes nothing that a decision depends on.
	 * @param c the entry; results are set on it
	 * @param state the key's state, or null for a fresh key
	 */
	void check(Eval c, @Nullable State state);

	/**
	 * Takes the cost.
	 * @param c the checked entry
	 * @param state the key's state or null
	 * @return the new state, with its TTL set
	 */
	State commit(Eval c, @Nullable State state);

	/**
	 * Gives back what request {@code c.rid} took (the sorted sets: the members from {@code c.seq}).
	 * @param c the entry
	 * @param state the key's state (not null)
	 */
	void refund(Eval c, State state);

	/**
	 * The TTL of a key that holds state for {@code micros}: {@code pexpire()} in common.lua.
	 * @param c the entry
	 * @param micros how long the state matters
	 * @return the TTL in microseconds
	 */
	static long ttlMicros(Eval c, double micros) {
		double ms = Math.ceil(micros / 1000);
		if (ms < 1) {
			ms = 1;
		}
		if (c.explicitTime && ms < EXPLICIT_TTL_FLOOR_MS) {
			ms = EXPLICIT_TTL_FLOOR_MS;
		}
		return (long) ms * 1000L;
	}

}
