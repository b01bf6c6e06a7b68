package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.FixedWindows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads over several clients (separate connection factories, as separate application instances would have)
 * hit one key at once: the exact algorithms admit exactly the limit, never one more. Server time, no explicit time.
 */
class ExactnessUnderConcurrencyTests {

	private static final int CLIENTS = 4;

	private static final int THREADS_PER_CLIENT = 8;

	private static final int ATTEMPTS_PER_THREAD = 60;

	private static final long LIMIT = 250;

	private static final List<Algorithm> EXACT = List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA,
			Algorithm.SLIDING_WINDOW_LOG, Algorithm.FIXED_WINDOW, Algorithm.CONCURRENCY,
			Algorithm.SLIDING_WINDOW_COUNTER);

	/** The fixed window's end (every 366 days since the epoch) must not fall amid its test's requests. */
	private static void awayFromTheFixedWindowsEnd() {
		FixedWindows.awayFromWindowEnd(RateLimitPolicy.MAX_WINDOW, Duration.ofMinutes(1));
	}

	private static RateLimitPolicy policy(Algorithm algorithm) {
		// the longest window: no refill worth a request happens during the test
		return RateLimitPolicy.builder("exact-" + algorithm.code())
			.algorithm(algorithm)
			.limit(LIMIT)
			.window(RateLimitPolicy.MAX_WINDOW)
			.build();
	}

	@ParameterizedTest
	@EnumSource(value = Backends.class, names = { "REDIS", "REDIS_CLUSTER" })
	void blockingCallsFromManyThreadsAndClientsAdmitExactlyTheLimit(Backends kind) throws Exception {
		kind.fresh();
		awayFromTheFixedWindowsEnd();
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(CLIENTS * THREADS_PER_CLIENT);
		try {
			List<RateLimiter> clients = new ArrayList<>();
			for (int i = 0; i < CLIENTS; i++) {
				LettuceConnectionFactory factory = kind.newConnectionFactory();
				factories.add(factory);
				clients.add(new DefaultRateLimiter(new RedisRateLimitBackend(factory)));
			}
			for (Algorithm algorithm : EXACT) {
				RateLimitRequest request = RateLimitRequest.of(policy(algorithm), "shared-key");
				AtomicInteger admitted = new AtomicInteger();
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < CLIENTS * THREADS_PER_CLIENT; t++) {
					RateLimiter client = clients.get(t % CLIENTS);
					futures.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
							if (client.check(request).allowed()) {
								admitted.incrementAndGet();
							}
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> future : futures) {
					future.get(60, TimeUnit.SECONDS);
				}
				assertThat(admitted.get()).as(algorithm.id() + " on " + kind).isEqualTo((int) LIMIT);
			}
		}
		finally {
			pool.shutdownNow();
			factories.forEach(LettuceConnectionFactory::destroy);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void nonBlockingCallsWithHundredsInFlightAdmitExactlyTheLimit(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		awayFromTheFixedWindowsEnd();
		for (Algorithm algorithm : EXACT) {
			RateLimitRequest request = RateLimitRequest.of(policy(algorithm), "async-key");
			Long admitted = Flux.range(0, 2000)
				.flatMap((i) -> limiter.checkAsync(request), 256)
				.filter(RateLimitDecision::allowed)
				.count()
				.block(Duration.ofSeconds(60));
			assertThat(admitted).as(algorithm.id() + " on " + kind).isEqualTo(LIMIT);
		}
	}

	@Test
	void localBackendIsExactUnderThreadsToo() throws Exception {
		RateLimiter limiter = Backends.LOCAL.fresh().limiter;
		awayFromTheFixedWindowsEnd();
		ExecutorService pool = Executors.newFixedThreadPool(16);
		try {
			for (Algorithm algorithm : EXACT) {
				RateLimitRequest request = RateLimitRequest.of(policy(algorithm), "local-key");
				AtomicInteger admitted = new AtomicInteger();
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < 16; t++) {
					futures.add(pool.submit(() -> {
						for (int i = 0; i < 200; i++) {
							if (limiter.check(request).allowed()) {
								admitted.incrementAndGet();
							}
						}
					}));
				}
				for (Future<?> future : futures) {
					future.get(60, TimeUnit.SECONDS);
				}
				assertThat(admitted.get()).as(algorithm.id()).isEqualTo((int) LIMIT);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

}
