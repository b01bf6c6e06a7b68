package io.github.ratelimit.it.webflux;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * BlockHound, installed once for the whole test JVM before any application starts: every blocking call on a
 * non-blocking thread (Netty's event loops, Lettuce's, Reactor's parallel scheduler) is recorded here and fails with
 * {@link BlockingOperationError}, so every request of every integration test runs under it.
 */
final class BlockingCalls {

	private static final List<String> DETECTED = new CopyOnWriteArrayList<>();

	static {
		// install(...) also applies the integrations found on the class path (Reactor's and Netty's, which tell
		// which threads are non-blocking); a bare builder() would watch no thread at all
		BlockHound.install((builder) -> builder
			// Lettuce takes a ReentrantLock for a few instructions in every command write to a shared connection,
			// so event loops writing at the same moment may park on it: a short critical section of the Redis
			// client, not I/O. Nothing else of Lettuce is allowed.
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			// Netty 4.2's adaptive buffer allocator, when it adds magazines under contention, frees the magazine it
			// replaces under that magazine's StampedLock, which a concurrent allocation holds for a few
			// instructions. Seen when Lettuce (re)connects and its CommandHandler allocates its buffer on the
			// event loop while other event loops allocate: the allocator's critical section, not I/O, and not ours.
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.blockingMethodCallback((method) -> {
				DETECTED.add(method + " on " + Thread.currentThread().getName() + where());
				throw new BlockingOperationError(method);
			}));
	}

	private BlockingCalls() {
	}

	/** The frames of the project and of the libraries that led to the call, for the failure message. */
	private static String where() {
		StringBuilder frames = new StringBuilder();
		for (StackTraceElement frame : new Throwable().getStackTrace()) {
			String name = frame.getClassName();
			if (!name.startsWith("reactor.blockhound") && !name.startsWith(BlockingCalls.class.getName())) {
				frames.append("\n\tat ").append(frame);
			}
		}
		return frames.toString();
	}

	/** Installs BlockHound (once). */
	static void install() {
		// the static initializer did
	}

	/**
	 * The blocking calls detected so far, cleared.
	 * @return the calls
	 */
	static List<String> drain() {
		List<String> calls = List.copyOf(DETECTED);
		DETECTED.removeAll(calls);
		return calls;
	}

}
