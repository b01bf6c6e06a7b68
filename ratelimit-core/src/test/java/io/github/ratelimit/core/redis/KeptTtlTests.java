package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.FixedWindows;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A write keeps its key's TTL when that ends no earlier than the write would have it end (fixed window and sliding
 * window counter: into the window the key already holds, changing only its count; GCRA, through its single-entry
 * script and the driver); a shorter TTL or an explicit time sets it again. A longer TTL than needed, put there by
 * hand, shows which of the two a write did; a write that keeps it leaves the key as a write that sets it does. Windows of
 * 30 days, aligned on the epoch: a test on the server's clock that would start within a minute of one's end waits for
 * the next. The token bucket's cases: {@link TokenBucketStateTests}.
 */
class KeptTtlTests {

	private static final long T0 = 1_700_000_000_000_000L;

	private static LettuceConnectionFactory factory;

	private static RedisRateLimitBackend backend;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		var server = RedisServers.standalone();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		redis = new StringRedisTemplate(factory);
		backend = RedisRateLimitBackend.builder(factory).build();
	}

	@AfterAll
	static void disconnect() {
		backend.stop();
		factory.destroy();
	}

	private static final Duration WINDOW = Duration.ofDays(30);

	private static RateLimitPolicy monthly(Algorithm algorithm) {
		return RateLimitPolicy.builder("window-" + UUID.randomUUID())
			.algorithm(algorithm)
			.limit(100)
			.window(WINDOW)
			.build();
	}

	private static void admit(RateLimitRequest request) {
		var acquisition = backend.acquire(request, "r").block();
		assertThat(acquisition).isNotNull();
		assertThat(acquisition.decisions().get(0).allowed()).isTrue();
	}

	private static long ttlMillis(String key) {
		Long ttl = redis.getExpire(key, TimeUnit.MILLISECONDS);
		assertThat(ttl).isNotNull();
		return ttl;
	}

	/** Alone (the single-entry script, GCRA's own) or beside a policy of another algorithm (the driver). */
	private static RateLimitRequest request(RateLimitPolicy policy, String identity, boolean driver) {
		RateLimitRequest.Builder builder = RateLimitRequest.builder().add(policy, identity, 1);
		return driver ? builder.add(monthly(Algorithm.TOKEN_BUCKET), identity, 1).build() : builder.build();
	}

	@ParameterizedTest
	@CsvSource({ "FIXED_WINDOW, false", "SLIDING_WINDOW_COUNTER, false", "GCRA, false", "GCRA, true" })
	void aWriteKeepsACoveringTtlAndSetsAShortOneAgain(Algorithm algorithm, boolean driver) {
		FixedWindows.awayFromWindowEnd(WINDOW, Duration.ofMinutes(1));
		RateLimitPolicy policy = monthly(algorithm);
		RateLimitRequest request = request(policy, "kept", driver);
		String key = backend.key(policy, "kept");
		admit(request);
		assertThat(ttlMillis(key)).isPositive();
		// longer than the key needs: the next write keeps it
		redis.expire(key, WINDOW.multipliedBy(3));
		admit(request);
		assertThat(ttlMillis(key)).isGreaterThan(WINDOW.multipliedBy(2).toMillis());
		// shorter than the key needs: the next write sets it again
		redis.expire(key, Duration.ofSeconds(5));
		admit(request);
		assertThat(ttlMillis(key)).isGreaterThan(Duration.ofSeconds(10).toMillis())
			.isLessThanOrEqualTo(WINDOW.multipliedBy(2).toMillis() + 1);
		if (algorithm != Algorithm.GCRA) {
			assertThat(redis.opsForHash().get(key, "c")).isEqualTo("3");
		}
	}

	/**
	 * On the server's clock, from each state a window's key can hold (its window, the one before, an older one, a later
	 * one after a clock went back, one of another length that overlaps it), one admission leaves the key the same
	 * whether its TTL was long enough to keep (only the count written) or too short (every field written).
	 */
	@ParameterizedTest
	@CsvSource({ "FIXED_WINDOW, 0, 1", "FIXED_WINDOW, -1, 1", "FIXED_WINDOW, 1, 1", "FIXED_WINDOW, 0, 2",
			"SLIDING_WINDOW_COUNTER, 0, 1", "SLIDING_WINDOW_COUNTER, -1, 1", "SLIDING_WINDOW_COUNTER, -2, 1",
			"SLIDING_WINDOW_COUNTER, 1, 1", "SLIDING_WINDOW_COUNTER, 0, 2" })
	void aWriteThatKeepsTheTtlLeavesTheKeyAsOneThatSetsIt(Algorithm algorithm, int windowsFromNow, int lengths) {
		// (a stored window two lengths long ends where a window of one length does)
		FixedWindows.awayFromWindowEnd(WINDOW, Duration.ofMinutes(1));
		RateLimitPolicy policy = monthly(algorithm);
		long window = WINDOW.toNanos() / 1000;
		long length = window * lengths;
		long stored = Math.floorDiv(redisMicros(), length) + windowsFromNow;
		Map<String, String> state = Map.of("w", Long.toString(stored), "l", Long.toString(length), "c", "3", "p", "2");
		Map<Object, Object> after = new HashMap<>();
		for (Duration ttl : List.of(WINDOW.multipliedBy(4), Duration.ofSeconds(30))) {
			String identity = "held-" + ttl.toSeconds();
			String key = backend.key(policy, identity);
			redis.opsForHash().putAll(key, state);
			redis.expire(key, ttl);
			admit(RateLimitRequest.of(policy, identity));
			after.put(ttl, redis.opsForHash().entries(key));
		}
		assertThat(after.get(WINDOW.multipliedBy(4))).isEqualTo(after.get(Duration.ofSeconds(30)));
	}

	private static long redisMicros() {
		Long micros = redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands()
			.time(TimeUnit.MICROSECONDS));
		assertThat(micros).isNotNull();
		return micros;
	}

	@ParameterizedTest
	@CsvSource({ "FIXED_WINDOW, false", "SLIDING_WINDOW_COUNTER, false", "GCRA, false", "GCRA, true" })
	void aWriteWithAnExplicitTimeSetsTheTtlEachTime(Algorithm algorithm, boolean driver) {
		RateLimitPolicy policy = monthly(algorithm);
		RateLimitRequest.Builder builder = RateLimitRequest.builder().add(policy, "explicit", 1);
		if (driver) {
			builder.add(monthly(Algorithm.TOKEN_BUCKET), "explicit", 1);
		}
		RateLimitRequest request = builder.at(T0).build();
		String key = backend.key(policy, "explicit");
		admit(request);
		redis.expire(key, WINDOW.multipliedBy(5));
		admit(request);
		// set again from the explicit time (at most two windows here), not kept
		assertThat(ttlMillis(key)).isLessThanOrEqualTo(WINDOW.multipliedBy(2).toMillis() + 1);
	}

}
