package io.github.ratelimit.spring.servlet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.MissingKey;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitHeaders;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitRule;
import io.github.ratelimit.testkit.RedisServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet filter over a leased policy on a real Redis: requests the slice holds are decided on the request
 * thread (RateLimiter.checkAtOnce), the others through Redis; either way exactly the limit is admitted, each request
 * gets its headers from what Redis and the slice know, and the decision listener hears of each request once.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class LeasedFilterTests {

	private static final RateLimitPolicy LEASED = RateLimitPolicy.builder("leased")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(10)
		.window(Duration.ofHours(1))
		.failureMode(FailureMode.CLOSED)
		.build();

	private final RedisServer redis = RedisServer.start();

	private final LettuceConnectionFactory factory = new LettuceConnectionFactory(
			new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()));

	private LeasingBackend leasing;

	@AfterEach
	void stop() {
		if (this.leasing != null) {
			this.leasing.close();
		}
		this.factory.destroy();
		this.redis.close();
	}

	@Test
	void theLimitIsAdmittedMostlyFromTheSliceWithTheHeadersOfEachDecisionAndEachDecisionHeardOnce() throws Exception {
		this.factory.afterPropertiesSet();
		this.factory.start();
		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.factory);
		backend.connect();
		this.leasing = new LeasingBackend(backend,
				Map.of(LEASED.name(), new LeaseSettings(4, Duration.ofMinutes(1), Duration.ofMinutes(1))));
		this.leasing.start();
		AtomicInteger heard = new AtomicInteger();
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(this.leasing).timeout(Duration.ofSeconds(2)).build();
		AtomicInteger atOnce = new AtomicInteger();
		RateLimiter counting = new RateLimiter() {

			@Override
			public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
				return limiter.checkAsync(request);
			}

			@Override
			public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request) {
				RateLimitDecision decision = limiter.checkAtOnce(request);
				atOnce.addAndGet((decision != null) ? 1 : 0);
				return decision;
			}

		};
		RateLimitEnforcer enforcer = new RateLimitEnforcer(counting,
				new RateLimitPolicyRegistry(List.of(ConfiguredPolicy.of(LEASED, KeySpec.parse("global", (name) -> {
					throw new IllegalArgumentException(name);
				}), MissingKey.SHARED))),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of(), List.of(LEASED.name()))), (name) -> {
					throw new IllegalArgumentException(name);
				}, FailureMode.OPEN, (decision) -> heard.incrementAndGet());
		RateLimitFilter filter = new RateLimitFilter(enforcer, new RateLimitResponses(RateLimitHeaders.ALL,
				new ProblemDetailRejectionHandler(), System::currentTimeMillis));
		List<String> remaining = new ArrayList<>();
		int admitted = 0;
		for (int i = 0; i < 15; i++) {
			MockHttpServletResponse response = new MockHttpServletResponse();
			MockFilterChain chain = new MockFilterChain();
			filter.doFilter(new MockHttpServletRequest("GET", "/api/orders"), response, chain);
			if (response.getStatus() == 200) {
				admitted++;
				assertThat(chain.getRequest()).isNotNull();
				remaining.add(response.getHeader(RateLimitHeaders.X_REMAINING));
			}
			else {
				assertThat(response.getStatus()).isEqualTo(429);
				assertThat(response.getHeader("Retry-After")).isNotNull();
			}
			assertThat(response.getHeader(RateLimitHeaders.RATELIMIT_POLICY)).isEqualTo("\"leased\";q=10;w=3600");
		}
		assertThat(admitted).isEqualTo(10);
		assertThat(remaining).containsExactly("9", "8", "7", "6", "5", "4", "3", "2", "1", "0");
		assertThat(heard).hasValue(15);
		assertThat(atOnce.get()).as("at least the first slice's three after the request that took it")
			.isBetween(3, 9);
	}

}
