package io.github.ratelimit.spring.servlet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.MissingKey;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitHeaders;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitRule;

/**
 * Enforcers over the local backend with a clock the test sets, so decisions and headers are exact.
 */
final class TestEnforcers {

	/** The fixed wall clock of the tests, in milliseconds (2025-01-01T00:00:00Z). */
	static final long NOW_MILLIS = 1_735_689_600_000L;

	private final AtomicLong micros = new AtomicLong(NOW_MILLIS * 1000);

	private final List<ConfiguredPolicy> policies = new ArrayList<>();

	private final List<RateLimitRule> rules = new ArrayList<>();

	TestEnforcers policy(String name, Algorithm algorithm, long limit, Duration window, String key) {
		return policy(name, algorithm, limit, window, key, MissingKey.SHARED);
	}

	TestEnforcers policy(String name, Algorithm algorithm, long limit, Duration window, String key,
			MissingKey missingKey) {
		RateLimitPolicy policy = RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(window).build();
		this.policies.add(ConfiguredPolicy.of(policy, KeySpec.parse(key, TestEnforcers::noBeans), missingKey));
		return this;
	}

	TestEnforcers rule(String path, String... policies) {
		this.rules.add(RateLimitRule.of(List.of(path), Set.of(), List.of(policies)));
		return this;
	}

	void advance(Duration duration) {
		this.micros.addAndGet(duration.toNanos() / 1000);
	}

	RateLimitEnforcer build() {
		return new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend(1000, this.micros::get)),
				new RateLimitPolicyRegistry(this.policies), this.rules, TestEnforcers::noBeans, FailureMode.OPEN);
	}

	RateLimitResponses responses() {
		return new RateLimitResponses(RateLimitHeaders.ALL, new ProblemDetailRejectionHandler(),
				() -> this.micros.get() / 1000);
	}

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

}
