package io.github.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static io.github.ratelimit.core.Requests.admitAll;
import static io.github.ratelimit.core.Requests.at;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A clock that goes back: a failover to a Redis server whose clock is behind, or the local backend's
 * {@code Instant.now()} stepping back. State written at the later time keeps counting until it expires, no
 * interval is refilled twice, waits are never early and keys live as long as the state they hold matters.
 */
class ClockRegressionTests {

	private static final long T0 = Backends.Clock.T0;

	private static final long SECOND = 1_000_000L;

	private static final long MINUTE = 60 * SECOND;

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("back-" + algorithm.code()).algorithm(algorithm).limit(limit).window(window)
			.build();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aTokenBucketDoesNotRefillTheSameIntervalTwice(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy policy = RateLimitPolicy.builder("refill")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(1)
			.window(Duration.ofSeconds(1))
			.burst(10)
			.build();
		long t = T0 + MINUTE;
		assertThat(at(limiter, t, policy, "skew", 5).allowed()).isTrue();
		assertThat(at(limiter, t - 5 * SECOND, policy, "skew", 1).allowed()).isTrue();
		assertThat(admitAll(limiter, t, policy, "skew", 12)).isEqualTo(4);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void noAlgorithmAdmitsMoreBecauseARequestCameWithAnEarlierClock(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm, 10, Duration.ofSeconds(10));
			long t = T0 + MINUTE + 2 * SECOND;
			// the same requests, once with the second one's clock five seconds behind, once on time
			int skewed = 0;
			int onTime = 0;
			for (String identity : new String[] { "skewed", "on-time" }) {
				assertThat(at(limiter, t, policy, identity, 5).allowed()).isTrue();
				long second = identity.equals("skewed") ? t - 5 * SECOND : t;
				int admitted = at(limiter, second, policy, identity, 1).allowed() ? 1 : 0;
				admitted += admitAll(limiter, t, policy, identity, 20);
				if (identity.equals("skewed")) {
					skewed = admitted;
				}
				else {
					onTime = admitted;
				}
			}
			assertThat(skewed).as(algorithm.id()).isLessThanOrEqualTo(onTime);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aWaitGivenWhileTheClockIsBehindIsNotEarly(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
			long boundary = T0 + 10 * MINUTE;
			// five of five one second into the next window, then a request with a clock two seconds behind
			assertThat(admitAll(limiter, boundary + SECOND, policy, "behind", 5)).isEqualTo(5);
			RateLimitDecision denied = at(limiter, boundary - SECOND, policy, "behind", 1);
			assertThat(denied.allowed()).as(algorithm.id()).isFalse();
			long wait = denied.retryAfter().toNanos() / 1_000;
			assertThat(at(limiter, boundary - SECOND + wait, policy, "behind", 1).allowed())
				.as("%s admitted after the %d us it was told to wait", algorithm.id(), wait)
				.isTrue();
		}
	}

	static Backends[] redis() {
		return Backends.redis().toArray(Backends[]::new);
	}

	@ParameterizedTest
	@MethodSource("redis")
	void aKeyWrittenWhileTheClockIsBehindLivesAsLongAsTheLaterStateMatters(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		long hour = 60 * MINUTE;
		long boundary = T0 + 5 * hour;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER,
				Algorithm.SLIDING_WINDOW_LOG }) {
			RateLimitPolicy policy = policy(algorithm, 5, Duration.ofHours(1));
			assertThat(at(fixture.limiter, boundary + SECOND, policy, "ttl", 2).allowed()).isTrue();
			// written ten minutes behind, into the later state: that state matters until its window ends (the
			// sliding window counter: until the next one ends, where it weighs as the previous window)
			assertThat(at(fixture.limiter, boundary - 10 * MINUTE, policy, "ttl", 1).allowed()).isTrue();
			long mattersFor = (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) ? 130 : 70;
			String key = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX).key(policy, "ttl");
			Long ttl = fixture.redis().getExpire(key, TimeUnit.MILLISECONDS);
			assertThat(ttl).as(algorithm.id()).isGreaterThan(Duration.ofMinutes(mattersFor - 5).toMillis());
		}
	}

	@Test
	void theLocalBackendKeepsStateWrittenWhileItsClockWasBehind() {
		AtomicLong clock = new AtomicLong();
		RateLimiter limiter = new DefaultRateLimiter(new LocalRateLimitBackend(1_000, clock::get));
		long boundary = T0 + 60 * MINUTE;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER,
				Algorithm.SLIDING_WINDOW_LOG }) {
			RateLimitPolicy policy = policy(algorithm, 5, Duration.ofHours(1));
			clock.set(boundary + SECOND);
			assertThat(limiter.check(RateLimitRequest.builder().add(policy, "local", 2).build()).allowed()).isTrue();
			clock.set(boundary - 10 * MINUTE);
			assertThat(limiter.check(RateLimitRequest.of(policy, "local")).allowed()).isTrue();
			// later, while the three requests still count (the sliding window counter: as the previous window)
			clock.set(boundary + ((algorithm == Algorithm.SLIDING_WINDOW_COUNTER) ? 90 : 30) * MINUTE);
			int admitted = 0;
			while (admitted < 10 && limiter.check(RateLimitRequest.of(policy, "local")).allowed()) {
				admitted++;
			}
			assertThat(admitted).as(algorithm.id()).isLessThanOrEqualTo(3);
			boundary += 5 * 60 * MINUTE;
		}
	}

}
