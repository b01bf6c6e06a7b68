package io.github.ratelimit.it.servlet;

import java.util.concurrent.TimeUnit;

import io.github.ratelimit.testkit.RedisServers;
import io.lettuce.core.Range;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Waits for concurrency permits, which the server releases just after a response has reached the client.
 */
final class Permits {

	private Permits() {
	}

	/**
	 * Waits (at most 10 s) until the probe is admitted, then until no permit is held any more (the probe's own
	 * included), so the next request of a test is not refused by a permit about to be released. A permit never
	 * released would block the probe for a minute.
	 * @param http the client
	 * @param probe a path under a concurrency policy
	 * @throws InterruptedException when interrupted
	 */
	static void awaitAdmitted(Http http, String probe) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		int status;
		while ((status = http.status(probe)) != 200 && System.nanoTime() < deadline) {
			assertThat(status).isEqualTo(429);
			Thread.sleep(20);
		}
		assertThat(status).as("%s admitted after the previous request completed", probe).isEqualTo(200);
		awaitNoneHeld(deadline);
	}

	/**
	 * Waits (at most 10 s) until no concurrency permit is held.
	 * @throws InterruptedException when interrupted
	 */
	static void awaitNoneHeld() throws InterruptedException {
		awaitNoneHeld(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
	}

	private static void awaitNoneHeld(long deadline) throws InterruptedException {
		while (held() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(held()).as("concurrency permits still held").isZero();
	}

	private static long held() {
		long held = 0;
		for (String key : RedisServers.standalone().commands().keys("rl:*:c2")) {
			held += held(key);
		}
		return held;
	}

	/**
	 * The permits a concurrency key holds: its members scored with a time, not the sequence's member {@code #}
	 * (scored below 0).
	 */
	static long held(String key) {
		return RedisServers.standalone().commands().zcount(key,
				Range.from(Range.Boundary.including(0), Range.Boundary.unbounded()));
	}

}
