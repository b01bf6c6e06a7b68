package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory backend's non-blocking path never parks a non-blocking thread, even when other threads hold the
 * locks of the same keys: BlockHound fails any such wait. Runs in a JVM of its own (see the module's pom).
 */
class LocalBackendBlockHoundTests {

	@BeforeAll
	static void installBlockHound() {
		BlockHound.install();
	}

	/** A sliding-window log near a large limit: each evaluation holds the key's lock for a while. */
	private static final RateLimitPolicy BUSY = RateLimitPolicy.builder("busy")
		.algorithm(Algorithm.SLIDING_WINDOW_LOG)
		.limit(50_000)
		.window(Duration.ofMinutes(10))
		.failureMode(FailureMode.LOCAL)
		.build();

	@Test
	void blockHoundIsWatching() {
		assertThat(Mono.fromCallable(() -> {
			Thread.sleep(1);
			return "slept";
		}).subscribeOn(Schedulers.parallel()).onErrorResume((ex) -> Mono.just(ex.getClass().getSimpleName()))
			.block(Duration.ofSeconds(5))).isEqualTo("BlockingOperationError");
	}

	@Test
	void acquiringOnANonBlockingThreadNeverWaitsForAnotherThreadsLock() throws Exception {
		LocalRateLimitBackend backend = new LocalRateLimitBackend();
		assertContendedCallsNeverBlock((i) -> acquireAndRelease(backend, i),
				(i) -> backend.acquire(request(), "blocking-" + i).block());
	}

	@Test
	void threadsWaitingForTheirAnswerOnTheLockNeverMakeANonBlockingThreadWait() throws Exception {
		LocalRateLimitBackend backend = new LocalRateLimitBackend();
		// the hammers wait as a servlet thread does (Waits.await): for the lock itself when it is taken
		assertContendedCallsNeverBlock((i) -> acquireAndRelease(backend, i),
				(i) -> Waits.await(backend.acquire(request(), "waiting-" + i)));
	}

	@Test
	void theLocalFailureModeNeverWaitsForAnotherThreadsLock() throws Exception {
		LocalRateLimitBackend fallback = new LocalRateLimitBackend();
		CircuitBreaker breaker = CircuitBreaker.ofDefaults("forced-open");
		breaker.transitionToForcedOpenState();
		// the breaker is open: every decision is made by the failure mode, in memory, without trying the backend
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(new LocalRateLimitBackend())
			.circuitBreaker(breaker)
			.fallback(fallback)
			.build();
		assertContendedCallsNeverBlock((i) -> limiter.checkAsync(request()).flatMap((d) -> d.reversal().releaseAsync()),
				(i) -> fallback.acquire(request(), "blocking-" + i).block());
	}

	private static Mono<Void> acquireAndRelease(LocalRateLimitBackend backend, int i) {
		return backend.acquire(request(), "async-" + i)
			.flatMap((acquisition) -> backend.release(request().entries(), "async-" + i,
					acquisition.entryTimesMicros(), acquisition.entrySequences()));
	}

	private static RateLimitRequest request() {
		return RateLimitRequest.of(BUSY, "hot");
	}

	/** Runs the non-blocking calls on the parallel scheduler while plain threads hammer the same key. */
	private static void assertContendedCallsNeverBlock(IntFunction<Mono<?>> nonBlocking, IntConsumer blocking)
			throws Exception {
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicInteger blockingCalls = new AtomicInteger();
		CountDownLatch started = new CountDownLatch(2);
		List<Thread> hammers = new ArrayList<>();
		for (int t = 0; t < 2; t++) {
			Thread hammer = new Thread(() -> {
				started.countDown();
				while (running.get()) {
					blocking.accept(blockingCalls.incrementAndGet());
				}
			});
			hammer.start();
			hammers.add(hammer);
		}
		assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
		try {
			List<Throwable> errors = Flux.range(0, 2_000)
				.parallel()
				.runOn(Schedulers.parallel())
				.flatMap((i) -> nonBlocking.apply(i).then(Mono.<Throwable>empty()).onErrorResume(Mono::just))
				.sequential()
				.collectList()
				.block(Duration.ofSeconds(60));
			// the whole trace, to tell which lock it was (the assertion's message is cut short)
			errors.stream().limit(1).forEach(Throwable::printStackTrace);
			assertThat(errors).isEmpty();
		}
		finally {
			running.set(false);
			for (Thread hammer : hammers) {
				hammer.join(10_000);
			}
		}
		assertThat(blockingCalls.get()).as("the key was contended").isPositive();
	}

}
