package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The figures of every response follow one definition (see {@link RateLimitHeaders}), for every algorithm, with the
 * engine's own decisions: a 429 never says quota remains for the request, {@code Retry-After} is never earlier than
 * the {@code t} of a denying policy, and {@code X-RateLimit-Reset} never moves backwards for one identity without an
 * admission in between. On the local backend with an explicit clock (a seeded random walk of requests of cost 1 and
 * 2), and on real Redis (a burst of requests on the server's clock).
 */
class RateLimitFigureInvariantsTests {

	static List<RateLimitPolicy> policies() {
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			policies.add(RateLimitPolicy.builder(algorithm.id()).algorithm(algorithm).limit(4)
				.window(Duration.ofSeconds(10)).build());
		}
		policies.add(RateLimitPolicy.builder("log-min-interval").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(10)
			.window(Duration.ofSeconds(60)).minInterval(Duration.ofSeconds(2)).build());
		return policies;
	}

	@ParameterizedTest
	@MethodSource("policies")
	void everyResponseOnTheLocalBackendFollowsTheDefinition(RateLimitPolicy policy) {
		AtomicLong micros = new AtomicLong(1_700_000_000_000_000L);
		DefaultRateLimiter limiter = new DefaultRateLimiter(new LocalRateLimitBackend(1000, micros::get));
		Random random = new Random(42);
		int denials = 0;
		long lastReset = Long.MIN_VALUE;
		for (int i = 0; i < 60; i++) {
			micros.addAndGet(random.nextInt(1_500) * 1000L);
			long cost = 1 + random.nextInt(2);
			RateLimitDecision decision = limiter.check(RateLimitRequest.builder().add(policy, "client", cost).build());
			HttpHeaders headers = RateLimitHeaders.ALL.of(decision, micros.get() / 1000);
			assertFollowsTheDefinition(decision, headers, cost);
			long reset = Long.parseLong(headers.getFirst(RateLimitHeaders.X_RESET));
			if (!decision.allowed()) {
				denials++;
				assertThat(reset).as("X-RateLimit-Reset of a denial after %s", lastReset).isGreaterThanOrEqualTo(lastReset);
			}
			lastReset = reset;
		}
		assertThat(denials).as("the walk reaches denials").isPositive();
	}

	@ParameterizedTest
	@MethodSource("policies")
	void everyResponseOnRedisFollowsTheDefinition(RateLimitPolicy policy) {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		factory.afterPropertiesSet();
		factory.start();
		try {
			DefaultRateLimiter limiter = new DefaultRateLimiter(new RedisRateLimitBackend(factory));
			int denials = 0;
			for (int i = 0; i < 12; i++) {
				long cost = 1 + (i % 2);
				RateLimitDecision decision = limiter
					.check(RateLimitRequest.builder().add(policy, "client", cost).build());
				assertFollowsTheDefinition(decision, RateLimitHeaders.ALL.of(decision, System.currentTimeMillis()),
						cost);
				denials += decision.allowed() ? 0 : 1;
			}
			assertThat(denials).as("a burst over the limit is denied").isPositive();
		}
		finally {
			factory.destroy();
		}
	}

	private static void assertFollowsTheDefinition(RateLimitDecision decision, HttpHeaders headers, long cost) {
		PolicyDecision policy = decision.decisions().get(0);
		Item<?> limit = (Item<?>) single(headers.getFirst(RateLimitHeaders.RATELIMIT));
		long r = (Long) limit.getParams().get("r").get();
		long t = (Long) limit.getParams().get("t").get();
		if (decision.allowed()) {
			assertThat(r).isEqualTo(policy.remaining());
			assertThat(headers.getFirst(HttpHeaders.RETRY_AFTER)).isNull();
			return;
		}
		assertThat(r).as("a 429 says no quota remains for a request of cost %d", cost).isLessThan(cost).isZero();
		assertThat(headers.getFirst(RateLimitHeaders.X_REMAINING)).isEqualTo("0");
		assertThat(Long.parseLong(headers.getFirst(HttpHeaders.RETRY_AFTER))).as("Retry-After >= t")
			.isGreaterThanOrEqualTo(t)
			.isPositive();
	}

	private static ListElement<?> single(String field) {
		List<ListElement<? extends Object>> list = Parser.parseList(field).get();
		assertThat(list).hasSize(1);
		return list.get(0);
	}

}
