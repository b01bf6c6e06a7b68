package io.github.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.GuardedRateLimiterTests.Path;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.Range;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guarded layer alone over a real Redis, frozen and thawed: what its shard's breaker hears of a call through
 * Resilience4j's decorator. An answer within one more budget after the timeout is a success, silence a failure; a
 * call whose caller gave up before it settled is not recorded at all, and what it took is given back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GuardedBackendTests {

	/** Long enough that a thaw right after a decision is answered well within one more budget. */
	private static final Duration BUDGET = Duration.ofSeconds(2);

	private static final RateLimitPolicy OPEN = RateLimitPolicy.builder("open")
		.algorithm(Algorithm.CONCURRENCY)
		.limit(100)
		.window(Duration.ofHours(1))
		.build();

	private RedisServer redis;

	private LettuceConnectionFactory factory;

	private RedisRateLimitBackend backend;

	private CircuitBreaker breaker;

	private GuardedBackend guarded;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(1)).build());
		this.factory.afterPropertiesSet();
		this.factory.start();
		this.backend = new RedisRateLimitBackend(this.factory);
		// the first call opens the connection and loads the script, outside the guard
		this.backend.acquire(RateLimitRequest.of(OPEN, "warm-up"), "warm-up").block();
		// never opens by itself: the test reads what it records
		this.breaker = CircuitBreaker.of("accounting", CircuitBreakerConfig.custom()
			.slidingWindowSize(100)
			.minimumNumberOfCalls(100)
			.permittedNumberOfCallsInHalfOpenState(1)
			.waitDurationInOpenState(Duration.ofHours(1))
			.build());
		Acquired.PermitsInFlight inFlight = new Acquired.PermitsInFlight();
		this.guarded = new GuardedBackend(this.backend, new Guard(this.backend, BUDGET, this.breaker, new ErrorCounts()),
				new FailureModes(new LocalRateLimitBackend(), Duration.ofSeconds(1), inFlight), inFlight);
	}

	@AfterEach
	void stop() {
		this.factory.destroy();
		this.redis.close();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void anAnswerWithinOneMoreBudgetIsASuccessAndSilenceAFailure(Path path) {
		CircuitBreaker.Metrics metrics = this.breaker.getMetrics();
		int successes = metrics.getNumberOfSuccessfulCalls();
		this.redis.freeze();
		RateLimitDecision late;
		try {
			late = decide(path, "late");
		}
		finally {
			this.redis.thaw();
		}
		assertThat(late.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
		Wait.until(Duration.ofSeconds(10), () -> metrics.getNumberOfSuccessfulCalls() == successes + 1);
		assertThat(metrics.getNumberOfFailedCalls()).isZero();
		this.redis.freeze();
		try {
			assertThat(decide(path, "silent").decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
			Wait.until(Duration.ofSeconds(10), () -> metrics.getNumberOfFailedCalls() == 1);
		}
		finally {
			this.redis.thaw();
		}
		assertThat(metrics.getNumberOfSuccessfulCalls()).isEqualTo(successes + 1);
	}

	@Test
	void aCallWhoseCallerGaveUpBeforeItSettledIsNotRecordedAndGivesBackWhatItTook() {
		this.breaker.transitionToOpenState();
		this.breaker.transitionToHalfOpenState();
		this.redis.freeze();
		try {
			Disposable waiting = this.guarded.decide(RateLimitRequest.of(OPEN, "cancelled")).subscribe();
			assertThat(this.breaker.tryAcquirePermission()).as("the call holds the only probe").isFalse();
			waiting.dispose();
			assertThat(this.breaker.tryAcquirePermission()).as("released by the cancel").isTrue();
			this.breaker.releasePermission();
		}
		finally {
			this.redis.thaw();
		}
		// the call ran once Redis did, and what it took went back
		String key = this.backend.key(OPEN, "cancelled");
		Wait.until(Duration.ofSeconds(10), () -> Double.valueOf(-1).equals(this.redis.commands().zscore(key, "#"))
				&& this.redis.commands().zcount(key, Range.from(Range.Boundary.including(0), Range.Boundary.unbounded())) == 0);
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
	}

	private RateLimitDecision decide(Path path, String identity) {
		RateLimitRequest request = RateLimitRequest.of(OPEN, identity);
		return (path == Path.BLOCKING) ? Waits.await(this.guarded.decide(request)) : this.guarded.decide(request).block();
	}

}
