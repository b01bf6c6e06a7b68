package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The windows' keys (fixed window, sliding window counter): a write into the window a key already holds changes only
 * its count and keeps its TTL when that ends no earlier than the window would have it end; a shorter TTL, a window the
 * key does not hold yet, or an explicit time sets it again. A longer TTL than needed, put there by hand, shows which
 * of the two a write did. Windows of a day: none ends while a test runs.
 */
class WindowTtlTests {

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

	private static RateLimitPolicy daily(Algorithm algorithm) {
		return RateLimitPolicy.builder("window-" + UUID.randomUUID())
			.algorithm(algorithm)
			.limit(100)
			.window(Duration.ofDays(1))
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

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void aWriteIntoTheHeldWindowKeepsACoveringTtlAndSetsAShortOneAgain(Algorithm algorithm) {
		RateLimitPolicy policy = daily(algorithm);
		RateLimitRequest request = RateLimitRequest.of(policy, "kept");
		String key = backend.key(policy, "kept");
		admit(request);
		long set = ttlMillis(key);
		assertThat(set).isPositive();
		// longer than the window needs: the next write keeps it and counts
		redis.expire(key, Duration.ofDays(3));
		admit(request);
		assertThat(ttlMillis(key)).isGreaterThan(Duration.ofDays(2).toMillis());
		assertThat(redis.opsForHash().get(key, "c")).isEqualTo("2");
		// shorter than the window needs: the next write sets it again, as the first did
		redis.expire(key, Duration.ofSeconds(5));
		admit(request);
		assertThat(ttlMillis(key)).isGreaterThan(Duration.ofSeconds(10).toMillis()).isLessThanOrEqualTo(set);
		assertThat(redis.opsForHash().get(key, "c")).isEqualTo("3");
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void aWriteWithAnExplicitTimeSetsTheTtlEachTime(Algorithm algorithm) {
		RateLimitPolicy policy = daily(algorithm);
		RateLimitRequest request = RateLimitRequest.builder().add(policy, "explicit", 1).at(T0).build();
		String key = backend.key(policy, "explicit");
		admit(request);
		redis.expire(key, Duration.ofDays(5));
		admit(request);
		// set again from the explicit time's window (at most two days for the counter), not kept
		assertThat(ttlMillis(key)).isLessThanOrEqualTo(Duration.ofDays(2).toMillis());
		assertThat(redis.opsForHash().get(key, "c")).isEqualTo("2");
	}

}
