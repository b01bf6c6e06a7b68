package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.GuardedRateLimiterTests.Path;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.Range;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Answers that arrive after the time budget, from a real Redis behind a loopback proxy that delays every answer by
 * more than the budget: a request the failure modes admitted is served, so what Redis took for it stays counted; a
 * refused request gives it back; a late concurrency permit goes back when its request ends; and the late answers
 * teach the denial cache, so an identity is denied once Redis has said so. The fallback of the {@code local} failure
 * mode counts the admissions Redis made too, so it never admits more than the limit per instance. The breaker is set never to open here:
 * these tests are about the answers, not about when to stop asking.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LateAnswerTests {

	private static final Duration BUDGET = Duration.ofMillis(100);

	private static final RateLimitPolicy OPEN = policy("open", Algorithm.GCRA, FailureMode.OPEN, 100);

	private static final RateLimitPolicy LOCAL = policy("local", Algorithm.TOKEN_BUCKET, FailureMode.LOCAL, 100);

	private static final RateLimitPolicy LOG = policy("log", Algorithm.SLIDING_WINDOW_LOG, FailureMode.OPEN, 100);

	private static final RateLimitPolicy CLOSED_LOG = policy("closed-log", Algorithm.SLIDING_WINDOW_LOG,
			FailureMode.CLOSED, 100);

	private static final RateLimitPolicy SMALL = policy("small", Algorithm.GCRA, FailureMode.OPEN, 3);

	private RedisServer redis;

	private TcpProxy proxy;

	private LettuceConnectionFactory slow;

	private LettuceConnectionFactory direct;

	private RedisRateLimitBackend redisState;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.proxy = TcpProxy.start(this.redis.address());
		this.slow = factory(this.proxy.port());
		this.direct = factory(this.redis.port());
		this.redisState = new RedisRateLimitBackend(this.direct);
	}

	@AfterEach
	void stop() {
		this.slow.destroy();
		this.direct.destroy();
		this.proxy.close();
		this.redis.close();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void requestsTheFailureModesAdmittedAreCountedOnceRedisAnswers(Path path) {
		DefaultRateLimiter limiter = limiter(null);
		warmUp(path, limiter);
		slowDown();
		for (int i = 0; i < 12; i++) {
			RateLimitDecision decision = path.check(limiter,
					RateLimitRequest.builder().add(OPEN, "served").add(LOCAL, "served").build());
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.degraded()).isTrue();
		}
		// every served request is counted in Redis, under both failure modes
		Wait.until(Duration.ofSeconds(10), () -> remaining(OPEN, "served") == 88 && remaining(LOCAL, "served") == 88);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void aRequestAClosedPolicyRefusedGivesBackWhatItsLateAnswerTook(Path path) {
		DefaultRateLimiter limiter = limiter(null);
		warmUp(path, limiter);
		slowDown();
		for (int i = 0; i < 5; i++) {
			RateLimitDecision decision = path.check(limiter,
					RateLimitRequest.builder().add(LOG, "refused").add(CLOSED_LOG, "refused").build());
			assertThat(decision.failedClosed()).isTrue();
		}
		// Redis ran all five (each set's sequence says so) and every entry they took went back
		Wait.until(Duration.ofSeconds(10),
				() -> ranAndHolds(LOG, "refused", 5, 0) && ranAndHolds(CLOSED_LOG, "refused", 5, 0));
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void aReversalGivesBackALateAnswerWhetherItLandedBeforeOrAfter(Path path) {
		DefaultRateLimiter limiter = limiter(null);
		warmUp(path, limiter);
		List<RateLimitDecision> decisions = new ArrayList<>();
		this.redis.freeze();
		try {
			for (int i = 0; i < 4; i++) {
				RateLimitDecision decision = path.check(limiter, RateLimitRequest.of(LOG, "reversed"));
				assertThat(decision.allowed()).isTrue();
				decisions.add(decision);
			}
			// two are reversed before Redis has answered (a later check denied their requests)
			decisions.get(0).reversal().release();
			decisions.get(1).reversal().releaseAsync().block();
		}
		finally {
			this.redis.thaw();
		}
		Wait.until(Duration.ofSeconds(10), () -> ranAndHolds(LOG, "reversed", 4, 2));
		// and two after
		decisions.get(2).reversal().release();
		decisions.get(3).reversal().releaseAsync().block();
		Wait.until(Duration.ofSeconds(10), () -> ranAndHolds(LOG, "reversed", 4, 0));
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void lateAnswersTeachTheDenialCacheSoNoAdmissionGoesBeyondTheLimit(Path path) {
		DefaultRateLimiter limiter = limiter(RateLimitDenialCache.create());
		warmUp(path, limiter);
		slowDown();
		int admitted = 0;
		for (int i = 1; i <= 3; i++) {
			RateLimitDecision decision = path.check(limiter, RateLimitRequest.of(SMALL, "cached"));
			assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
			admitted++;
			// a client whose next request comes once Redis has answered the last one, and the answer is in
			long left = 3 - i;
			Wait.until(Duration.ofSeconds(10), () -> remaining(SMALL, "cached") == left);
		}
		RateLimitDenialCache cache = limiter.denialCache();
		Wait.until(Duration.ofSeconds(10), () -> cache.lookup(RateLimitRequest.of(SMALL, "cached")) != null);
		// the third answer, which left no room, taught the cache: denied as Redis would, without a call
		for (int i = 0; i < 5; i++) {
			RateLimitDecision decision = path.check(limiter, RateLimitRequest.of(SMALL, "cached"));
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		}
		assertThat(admitted).isEqualTo(3);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void theLocalFallbackKnowsEveryRequestRedisAdmittedHere(Path path) {
		RateLimitPolicy local = policy("local-small", Algorithm.TOKEN_BUCKET, FailureMode.LOCAL, 3);
		RateLimitPolicy permits = policy("local-permits", Algorithm.CONCURRENCY, FailureMode.LOCAL, 2);
		Duration budget = Duration.ofSeconds(1);
		DefaultRateLimiter limiter = limiter(null, budget);
		warmUp(path, limiter);
		// Redis must decide every first request: a loaded machine can miss even a second's budget (the fallback then
		// decides one, and the round proves nothing), so a round that missed starts again on a new identity
		List<RateLimitDecision> held = new ArrayList<>();
		AtomicInteger round = new AtomicInteger();
		Wait.until("five requests Redis decided within the budget", Duration.ofSeconds(90), () -> {
			held.clear();
			return redisDecides(path, limiter, local, permits, "mirrored-" + round.incrementAndGet(), held);
		});
		String identity = "mirrored-" + round.get();
		System.out.printf("%s: Redis decided all five first requests in round %d%n", path, round.get());
		this.proxy.latency(budget);
		// the fallback decides now, and counts what Redis admitted before: nothing more for this instance
		RateLimitDecision denied = path.check(limiter, RateLimitRequest.of(local, identity));
		assertThat(denied.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		assertThat(denied.allowed()).isFalse();
		RateLimitDecision noPermit = path.check(limiter, RateLimitRequest.of(permits, identity));
		assertThat(noPermit.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		assertThat(noPermit.allowed()).isFalse();
		// a request that ends gives its permit back to both
		held.get(0).permit().release();
		RateLimitDecision permitted = path.check(limiter, RateLimitRequest.of(permits, identity));
		assertThat(permitted.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		assertThat(permitted.allowed()).isTrue();
		permitted.permit().release();
		held.get(1).permit().release();
	}

	/**
	 * Whether Redis admitted, within the budget, all three requests of {@code local} and both permits of
	 * {@code permits} for {@code identity}; the permits admitted are added to {@code held}.
	 */
	private static boolean redisDecides(Path path, DefaultRateLimiter limiter, RateLimitPolicy local,
			RateLimitPolicy permits, String identity, List<RateLimitDecision> held) {
		boolean enforced = true;
		for (int i = 0; i < 3; i++) {
			RateLimitDecision decision = path.check(limiter, RateLimitRequest.of(local, identity));
			enforced &= decision.allowed() && decision.decisions().get(0).enforcement() == Enforcement.ENFORCED;
		}
		for (int i = 0; i < 2; i++) {
			RateLimitDecision decision = path.check(limiter, RateLimitRequest.of(permits, identity));
			enforced &= decision.allowed() && decision.decisions().get(0).enforcement() == Enforcement.ENFORCED;
			held.add(decision);
		}
		return enforced;
	}

	/** Answers later than the budget, and later than one more budget, so that every call here is late. */
	private void slowDown() {
		this.proxy.latency(BUDGET.multipliedBy(2));
	}

	/** The first calls of a client open its connection and load its scripts: made before Redis slows down. */
	private static void warmUp(Path path, DefaultRateLimiter limiter) {
		Wait.until(Duration.ofSeconds(30), () -> !path
			.check(limiter, RateLimitRequest.builder().add(OPEN, "warm-up").add(SMALL, "warm-up").build())
			.degraded());
	}

	private long remaining(RateLimitPolicy policy, String identity) {
		return this.redisState.inspect(RateLimitRequest.of(policy, identity)).get(0).remaining();
	}

	/** Whether a sorted set's sequence says that many acquisitions ran, and it holds that many entries. */
	private boolean ranAndHolds(RateLimitPolicy policy, String identity, int ran, long holds) {
		String key = this.redisState.key(policy, identity);
		return Double.valueOf(-ran).equals(this.redis.commands().zscore(key, "#")) && this.redis.commands()
			.zcount(key, Range.from(Range.Boundary.including(0), Range.Boundary.unbounded())) == holds;
	}

	private DefaultRateLimiter limiter(RateLimitDenialCache cache) {
		return limiter(cache, BUDGET);
	}

	private DefaultRateLimiter limiter(RateLimitDenialCache cache, Duration budget) {
		DefaultRateLimiter.Builder builder = DefaultRateLimiter.builder(new RedisRateLimitBackend(this.slow))
			.timeout(budget)
			.circuitBreaker(CircuitBreaker.of("late", CircuitBreakerConfig.custom()
				.slidingWindowSize(1000)
				.minimumNumberOfCalls(1000)
				.build()))
			.fallback(new LocalRateLimitBackend());
		if (cache != null) {
			builder.denialCache(cache);
		}
		return builder.build();
	}

	private static LettuceConnectionFactory factory(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(1)).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, FailureMode mode, long limit) {
		return RateLimitPolicy.builder(name)
			.algorithm(algorithm)
			.limit(limit)
			.window(Duration.ofHours(1))
			.failureMode(mode)
			.build();
	}

}
