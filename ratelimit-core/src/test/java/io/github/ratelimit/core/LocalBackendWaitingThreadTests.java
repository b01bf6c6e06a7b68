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

	@Test
	void anInterruptEndsTheWaitForTheLock() throws Exception {
		holdTheKeysLock();
		CompletableFuture<Throwable> failure = new CompletableFuture<>();
		Thread waiter = new Thread(() -> failure.complete(awaitFailure(this.backend.acquire(request(), "waiter"))),
				"the-waiter");
		waiter.start();
		awaitParked(waiter); // on the lock, which the holder keeps until the test ends
		waiter.interrupt();
		assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("Interrupted");
	}

	@Test
	void aThreadInterruptedBeforeItAsksFailsAsBefore() throws Exception {
		holdTheKeysLock();
		CompletableFuture<Throwable> failure = new CompletableFuture<>();
		Thread waiter = new Thread(() -> {
			Thread.currentThread().interrupt();
			failure.complete(awaitFailure(this.backend.acquire(request(), "waiter")));
		}, "the-waiter");
		waiter.start();
		assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("Interrupted");
	}

	@Test
	void anUnguardedLimitersCheckEvaluatesOnTheCheckingThread() throws Exception {
		assertThat(readersOfACheck(new DefaultRateLimiter(this.backend))).contains("the-waiter")
			.noneMatch((name) -> name.startsWith("boundedElastic"));
	}

	@Test
	void aGuardedLimitersCheckHandsTheEvaluationOver() throws Exception {
		// the guard subscribes to the backend's call itself (the mark of the waiting thread stays behind), so its
		// budget and breaker bound a call that never blocks the checking thread
		assertThat(readersOfACheck(DefaultRateLimiter.builder(this.backend).build()))
			.anyMatch((name) -> name.startsWith("boundedElastic"))
			.doesNotContain("the-waiter");
	}

	/** The threads that evaluated a check made while another thread holds the key's lock. */
	private List<String> readersOfACheck(RateLimiter limiter) throws Exception {
		holdTheKeysLock();
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		Thread waiter = new Thread(() -> answer.complete(limiter.check(request())), "the-waiter");
		waiter.start();
		awaitParked(waiter);
		this.release.countDown();
		assertThat(answer.get(10, TimeUnit.SECONDS).allowed()).isTrue();
		return this.readers;
	}

	/** Waits for the answer; the failure it ends with, or an assertion error when it ends without one. */
	private static Throwable awaitFailure(Mono<?> answer) {
		try {
			Waits.await(answer);
			return new AssertionError("answered");
		}
		catch (RuntimeException ex) {
			return ex;
		}
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
