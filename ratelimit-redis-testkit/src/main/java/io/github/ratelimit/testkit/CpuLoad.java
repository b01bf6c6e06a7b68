package io.github.ratelimit.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A machine under load, for tests that must hold while every core is busy (as on a shared CI machine): busy threads,
 * two per core, spinning until {@link #close()}. They never block and never allocate, so they take CPU time from
 * everything else (the application's threads, the Redis server, the client's event loops) without touching memory.
 *
 * <pre>{@code
 * try (CpuLoad load = CpuLoad.start()) {
 *     ... // the test's requests
 * }
 * }</pre>
 */
public final class CpuLoad implements AutoCloseable {

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final List<Thread> threads = new ArrayList<>();

	private CpuLoad(int threads) {
		for (int i = 0; i < threads; i++) {
			Thread thread = new Thread(this::spin, "cpu-load-" + i);
			thread.setDaemon(true);
			this.threads.add(thread);
			thread.start();
		}
	}

	/**
	 * Starts two busy threads per available core.
	 * @return the running load
	 */
	public static CpuLoad start() {
		return new CpuLoad(2 * Runtime.getRuntime().availableProcessors());
	}

	private void spin() {
		long value = 0;
		while (this.running.get()) {
			value = value * 6364136223846793005L + 1442695040888963407L;
		}
		if (value == 42) {
			Thread.onSpinWait();
		}
	}

	/**
	 * Stops the busy threads and waits for them to end.
	 */
	@Override
	public void close() {
		this.running.set(false);
		for (Thread thread : this.threads) {
			try {
				thread.join(5_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
