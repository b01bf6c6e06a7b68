package io.github.ratelimit.core.local;

import org.jspecify.annotations.Nullable;

/**
 * One algorithm's twin of its Lua file: {@code check} reads, {@code commit} takes the cost, {@code refund} gives
 * back. A missing state is a fresh key.
 */
interface LocalAlgorithm {

	double EPS = 1e-9;

	/**
	 * Evaluates the entry against the state; may drop expired parts of the state (as ZREMRANGEBYSCORE does) but
	 * changes nothing that a decision depends on.
	 * @param c the entry; results are set on it
	 * @param state the key's state, or null for a fresh key
	 */
	void check(Eval c, @Nullable State state);

	/**
	 * Whether the state holds nothing any more (Redis deletes an emptied sorted set).
	 * @param state the state
	 * @return true when the key can go
	 */
	default boolean isEmpty(State state) {
		return false;
	}

	/**
	 * Takes the cost.
	 * @param c the checked entry
	 * @param state the key's state or null
	 * @return the new state, with its TTL set
	 */
	State commit(Eval c, @Nullable State state);

	/**
	 * Gives back what request {@code c.rid} took.
	 * @param c the entry
	 * @param state the key's state (not null)
	 */
	void refund(Eval c, State state);

	static long ceilMillisAsMicros(double micros) {
		double ms = Math.ceil(micros / 1000);
		return (ms < 1 ? 1 : (long) ms) * 1000L;
	}

}
