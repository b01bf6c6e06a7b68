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
	 * The Redis commands this contender sends as a client (each one a round trip).
	 * @return lower-case command names
	 */
	default java.util.Set<String> clientCommands() {
		return java.util.Set.of("evalsha", "eval");
	}

	/** Whether the non-blocking form exists. */
	default boolean supportsAsync() {
		return true;
	}

	@Override
	default void close() {
	}

}
