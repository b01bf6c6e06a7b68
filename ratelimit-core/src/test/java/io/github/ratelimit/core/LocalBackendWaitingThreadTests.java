package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the in-memory backend evaluates a request whose key's lock another thread holds: on the thread that waits
 * for the answer ({@link Waits#await}) itself, which blocks anyway, instead of on a bounded-elastic thread that then
 * wakes it; a subscriber that does not wait (an event loop) is still never made to wait for the lock.
 */
class LocalBackendWaitingThreadTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("waiting")
		.algorithm(Algorithm.GCRA)
		.limit(1_000_000)
		.window(Duration.ofMinutes(1))
		.build();

	/** The thread whose first clock read, under the key's lock, waits until released. */
	private final AtomicReference<Thread> holder = new AtomicReference<>();

	private final CountDownLatch holding = new CountDownLatch(1);

	private final CountDownLatch release = new CountDownLatch(1);

	/** The threads that read the clock once the holder was released. */
	private final List<String> readers = new CopyOnWriteArrayList<>();

	private final LocalRateLimitBackend backend = new LocalRateLimitBackend(1_000, () -> {
		if (Thread.currentThread() == this.holder.get()) {
			this.holding.countDown();
			awaitQuietly(this.release);
		}
		else if (this.release.getCount() == 0) {
			this.readers.add(Thread.currentThread().getName());
		}
		return System.currentTimeMillis() * 1_000;
	});

	private Thread holderThread = new Thread(() -> { });

	@AfterEach
	void letGo() throws InterruptedException {
		this.release.countDown();
		this.holderThread.join(10_000);
	}

	@Test
	void aThreadWaitingForTheAnswerWaitsForTheLockItself() throws Exception {
		holdTheKeysLock();
		CompletableFuture<RateLimitBackend.Acquisition> answer = new CompletableFuture<>();
		Thread waiter = new Thread(() -> answer.complete(Waits.await(this.backend.acquire(request(), "waiter"))),
				"the-waiter");
		waiter.start();
		awaitParked(waiter); // on the lock, or (before this change) on the answer from elsewhere
		this.release.countDown();
		assertThat(answer.get(10, TimeUnit.SECONDS).decisions()).singleElement()
			.satisfies((decision) -> assertThat(decision.allowed()).isTrue());
		assertThat(this.readers).contains("the-waiter").noneMatch((name) -> name.startsWith("boundedElastic"));
	}

	@Test
	void aSubscriberThatDoesNotWaitIsNeverMadeToWaitForTheLock() throws Exception {
		holdTheKeysLock();
		// subscribed here, not waited for here: the evaluation goes to another thread, this one returns at once
		CompletableFuture<RateLimitBackend.Acquisition> answer = this.backend.acquire(request(), "async").toFuture();
		assertThat(answer).isNotDone();
		this.release.countDown();
		assertThat(answer.get(10, TimeUnit.SECONDS).decisions()).singleElement()
			.satisfies((decision) -> assertThat(decision.allowed()).isTrue());
		assertThat(this.readers).anyMatch((name) -> name.startsWith("boundedElastic"))
			.doesNotContain(Thread.currentThread().getName());
	}

	/** Starts a thread that takes the key's lock (its evaluation reads the clock) and keeps it until released. */
	private void holdTheKeysLock() throws InterruptedException {
		this.holderThread = new Thread(() -> Mono.defer(() -> this.backend.acquire(request(), "holder")).block());
		this.holder.set(this.holderThread);
		this.holderThread.start();
		assertThat(this.holding.await(10, TimeUnit.SECONDS)).isTrue();
	}

	private static RateLimitRequest request() {
		return RateLimitRequest.of(POLICY, "hot");
	}

	private static void awaitParked(Thread thread) throws InterruptedException {
		while (thread.getState() != Thread.State.WAITING && thread.getState() != Thread.State.TIMED_WAITING) {
			Thread.sleep(1);
		}
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
