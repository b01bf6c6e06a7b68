package io.github.ratelimit.it.servlet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A steady trickle of requests, not a flood: a few threads each run one step, pause briefly and go again, until
 * closed. Enough traffic for rates a second apart, little enough to leave the shared cores to the application and
 * Prometheus. Closing fails with the first exception a step threw.
 */
final class PacedLoad implements AutoCloseable {

	private static final long PAUSE_MILLIS = 10;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final AtomicReference<RuntimeException> failure = new AtomicReference<>();

	private final List<Thread> threads = new ArrayList<>();

	/**
	 * Starts the load.
	 * @param name the threads' name
	 * @param threads how many threads run the step
	 * @param step one request (or a few)
	 */
	PacedLoad(String name, int threads, Runnable step) {
		for (int i = 0; i < threads; i++) {
			Thread thread = new Thread(() -> run(step), name + "-" + i);
			thread.setDaemon(true);
			this.threads.add(thread);
			thread.start();
		}
	}

	private void run(Runnable step) {
		while (this.running.get()) {
			try {
				step.run();
				Thread.sleep(PAUSE_MILLIS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				this.failure.compareAndSet(null, ex);
				return;
			}
		}
	}

	@Override
	public void close() {
		this.running.set(false);
		for (Thread thread : this.threads) {
			try {
				thread.join(60_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		if (this.failure.get() != null) {
			throw this.failure.get();
		}
	}

}
