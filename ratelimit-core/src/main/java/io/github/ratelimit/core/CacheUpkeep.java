package io.github.ratelimit.core;

import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import reactor.core.scheduler.Schedulers;

/**
 * Where the limiter's Caffeine caches do their upkeep: on the thread that read or wrote, unless it is a non-blocking
 * one (an event loop Reactor knows of), which hands it to the common pool as Caffeine does by default. Upkeep after a
 * write is usually a fraction of a microsecond, less than waking a pool thread for it on every write; expiring many
 * keys at once can take milliseconds, which an event loop must not spend.
 */
public final class CacheUpkeep {

	/** The executor to give {@code Caffeine.executor}. */
	public static final Executor EXECUTOR = (task) -> {
		if (Schedulers.isInNonBlockingThread()) {
			ForkJoinPool.commonPool().execute(task);
		}
		else {
			task.run();
		}
	};

	private CacheUpkeep() {
	}

}
