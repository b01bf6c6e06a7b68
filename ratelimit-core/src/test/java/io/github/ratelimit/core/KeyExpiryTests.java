package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.testkit.FixedWindows;
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
		// the fixed window's key lives to the end of its one-second window (Redis runs on this machine's clock): on a
		// loaded machine the check and the read may straddle a second's end and miss it; then a new identity is tried
		Map<String, Long> ttls = Map.of();
		for (int attempt = 0; attempt < 20 && ttls.size() != Algorithm.values().length; attempt++) {
			Thread.sleep(1000 - System.currentTimeMillis() % 1000);
			String identity = "idle-" + attempt;
			RateLimitDecision decision = fixture.limiter.check(everyAlgorithm(Duration.ofSeconds(1), identity));
			assertThat(decision.allowed()).isTrue();
			ttls = fixture.ttls()
				.entrySet()
				.stream()
				.filter((ttl) -> ttl.getKey().contains(identity) && ttl.getValue() != -2)
				.collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
		}
		assertThat(ttls).hasSize(Algorithm.values().length);
		// at most one window (two for the sliding window counter, whose count weighs on the next window)
		assertThat(ttls.values()).allSatisfy((ttl) -> assertThat(ttl).isBetween(1L, 2000L));

		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (!fixture.keys().isEmpty() && System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(fixture.keys()).as("idle keys expire").isEmpty();
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void longWindowsGetLongTtlsNotNone(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		// the fixed window's key lives to midnight (UTC): not between the check and the read
		FixedWindows.awayFromWindowEnd(Duration.ofDays(1), Duration.ofMinutes(1));
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

	@Test
	void aLocalKeyWrittenAgainLivesItsTtlFromTheLastWrite() {
		// the second admission changes the key's state in place: its expiry must move as PEXPIRE would move it
		AtomicLong clock = new AtomicLong(Backends.Clock.T0);
		LocalRateLimitBackend backend = new LocalRateLimitBackend(1_000, clock::get);
		RateLimiter limiter = new DefaultRateLimiter(backend);
		RateLimitPolicy paced = RateLimitPolicy.builder("paced")
			.algorithm(Algorithm.GCRA)
			.limit(10)
			.window(Duration.ofSeconds(1))
			.build();
		RateLimitRequest request = RateLimitRequest.of(paced, "client");
		RateLimitRequest fresh = RateLimitRequest.of(paced, "never-seen");
		assertThat(limiter.check(request).allowed()).isTrue(); // its TTL: one interval, 100 ms
		clock.addAndGet(80_000);
		assertThat(limiter.check(request).allowed()).isTrue(); // now until 200 ms after the first
		clock.addAndGet(70_000);
		// a read sees expiry exactly (the count of keys only as Caffeine's timer wheel advances)
		assertThat(backend.inspect(request).get(0).remaining()).as("its state alive past the first write's TTL")
			.isLessThan(backend.inspect(fresh).get(0).remaining());
		clock.addAndGet(60_000);
		assertThat(backend.inspect(request).get(0).remaining()).as("gone once idle past the last write's TTL")
			.isEqualTo(backend.inspect(fresh).get(0).remaining());
	}

}
