package io.github.ratelimit.it.servlet;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a handler in flight until the test opens it. Unarmed, it lets everything through.
 */
public final class Gate {

	private volatile CountDownLatch entered = new CountDownLatch(0);

	private volatile CountDownLatch open = new CountDownLatch(0);

	/** The next request to {@link #pass()} waits until {@link #open()}. */
	public void arm() {
		this.entered = new CountDownLatch(1);
		this.open = new CountDownLatch(1);
	}

	/** Signals that a request is in the handler, then waits until the gate is open (at most 30 s). */
	public void pass() {
		CountDownLatch open = this.open;
		this.entered.countDown();
		try {
			if (!open.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("gate never opened");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Signals that a request is in the handler, without waiting. */
	public void signal() {
		this.entered.countDown();
	}

	/**
	 * Waits until a request has entered the handler.
	 * @throws InterruptedException when interrupted
	 */
	public void awaitEntered() throws InterruptedException {
		if (!this.entered.await(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("no request entered the handler");
		}
	}

	/** Lets the waiting request go on. */
	public void open() {
		this.open.countDown();
	}

}
