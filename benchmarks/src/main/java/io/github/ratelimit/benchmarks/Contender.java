package io.github.ratelimit.benchmarks;

import java.util.concurrent.CompletionStage;

/**
 * One implementation under test: decides whether identity {@code i} may pass, blocking or not. Even identities use
 * an open limit (always admitted), odd ones, in the half-denied scenario, an exhausted one.
 */
interface Contender extends AutoCloseable {

	String name();

	boolean acquire(int identity);

	CompletionStage<Boolean> acquireAsync(int identity);

	/**
	 * The round trips this contender made, from the Redis server's command counts (which also count the commands
	 * scripts run).
	 * @param calls the number of calls of a command (lower case) during the measurement
	 * @return the round trips
	 */
	default long roundTrips(java.util.function.ToLongFunction<String> calls) {
		return calls.applyAsLong("evalsha") + calls.applyAsLong("eval");
	}

	/** Whether the non-blocking form exists. */
	default boolean supportsAsync() {
		return true;
	}

	@Override
	default void close() {
	}

}
