package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No key grows or lives without bound: every key written carries a TTL, and an idle key disappears after it.
 */
class KeyExpiryTests {

	static java.util.List<Backends> redisKinds() {
		return Backends.redis();
	}

	/** Limit 1, so one request leaves every key holding state for about one window. */
	private static RateLimitRequest everyAlgorithm(Duration window, String identity) {
		RateLimitRequest.Builder builder = RateLimitRequest.builder();
		for (Algorithm algorithm : Algorithm.values()) {
			builder.add(RateLimitPolicy.builder("ttl-" + algorithm.code())
				.algorithm(algorithm)
				.limit(1)
				.window(window)
				.build(), identity);
		}
		return builder.build();
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void everyKeyWrittenCarriesATtlAndIdleKeysVanish(Backends kind) throws InterruptedException {
		Backends.Fixture fixture = kind.fresh();
		// early in a second (Redis runs on this machine's clock): the fixed window's key, which lives to the end of
		// its window, is still there when the TTLs are read
		Thread.sleep(1000 - System.currentTimeMillis() % 1000);
		RateLimitDecision decision = fixture.limiter.check(everyAlgorithm(Duration.ofSeconds(1), "idle-client"));
		assertThat(decision.allowed()).isTrue();
		Map<String, Long> ttls = fixture.ttls();
		assertThat(ttls).hasSize(Algorithm.values().length);
		// at most one window (two for the sliding window counter, whose count weighs on the next window)
		assertThat(ttls.values()).allSatisfy((ttl) -> assertThat(ttl).isBetween(1L, 2000L));

		long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
		while (!fixture.keys().isEmpty() && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(fixture.keys()).as("idle keys expire").isEmpty();
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void longWindowsGetLongTtlsNotNone(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		fixture.limiter.check(everyAlgorithm(Duration.ofDays(1), "long-lived"));
		assertThat(fixture.ttls().values()).allSatisfy((ttl) -> assertThat(ttl).isPositive());
	}

	@Test
	void localKeysExpireOnTheBackendClockAndStayBounded() {
		AtomicLong clock = new AtomicLong(Backends.Clock.T0);
		LocalRateLimitBackend backend = new LocalRateLimitBackend(1_000, clock::get);
		RateLimiter limiter = new DefaultRateLimiter(backend);
		limiter.check(everyAlgorithm(Duration.ofSeconds(1), "idle-client"));
		assertThat(backend.keyCount()).isEqualTo(Algorithm.values().length);
		clock.addAndGet(Duration.ofMillis(2100).toNanos() / 1000);
		assertThat(backend.keyCount()).as("every key idle past its TTL is gone").isZero();

		for (int i = 0; i < 5_000; i++) {
			limiter.check(RateLimitRequest.of(
					RateLimitPolicy.builder("many").algorithm(Algorithm.GCRA).limit(5).window(Duration.ofHours(1)).build(),
					"client-" + i));
		}
		assertThat(backend.keyCount()).as("bounded by maximumKeys").isLessThanOrEqualTo(1_000);
	}

}
