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

	/** The tolerance for a quantity of magnitude up to {@code magnitude}: {@code tol()} in common.lua. */
	static double tol(double magnitude) {
		return EPS * Math.max(1, magnitude);
	}

	/** Evaluates the entry (results set on it); may drop expired parts of the state, nothing a decision depends on. */
	void check(Eval c, @Nullable State state);

	/** Takes the cost; returns the new state, with its TTL set. */
	State commit(Eval c, @Nullable State state);

	/** Gives back what request {@code c.rid} took (the sorted sets: the members from {@code c.seq}). */
	void refund(Eval c, State state);

	/** The TTL in microseconds of a key that holds state for {@code micros}: {@code pexpire()} in common.lua. */
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
