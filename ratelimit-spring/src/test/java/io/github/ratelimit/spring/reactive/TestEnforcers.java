package io.github.ratelimit.spring.reactive;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimiter;
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
 * Builds enforcers over the local backend for the tests of this package.
 */
final class TestEnforcers {

	private final List<ConfiguredPolicy> policies = new ArrayList<>();

	private final List<RateLimitRule> rules = new ArrayList<>();

	/** A fixed time on a minute boundary, so that windows and the headers derived from them are exact. */
	static final long NOW_MICROS = 1_700_000_040_000_000L;

	private RateLimiter limiter = new DefaultRateLimiter(new LocalRateLimitBackend(1000, () -> NOW_MICROS));

	static TestEnforcers create() {
		return new TestEnforcers();
	}

	static RateLimitPolicy policy(String name, Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(window).build();
	}

	static KeySpec key(String spec) {
		return KeySpec.parse(spec, TestEnforcers::noBeans);
	}

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	TestEnforcers policy(RateLimitPolicy policy, String key) {
		this.policies.add(ConfiguredPolicy.of(policy, key(key), MissingKey.SHARED));
		return this;
	}

	TestEnforcers fixedWindow(String name, long limit, String key) {
		return policy(policy(name, Algorithm.FIXED_WINDOW, limit, Duration.ofMinutes(1)), key);
	}

	TestEnforcers concurrency(String name, long limit, String key) {
		return policy(policy(name, Algorithm.CONCURRENCY, limit, Duration.ofMinutes(1)), key);
	}

	TestEnforcers rule(String path, String... policyNames) {
		this.rules.add(RateLimitRule.of(List.of(path), Set.of(), List.of(policyNames)));
		return this;
	}

	TestEnforcers limiter(RateLimiter limiter) {
		this.limiter = limiter;
		return this;
	}

	RateLimiter limiter() {
		return this.limiter;
	}

	RateLimitEnforcer build() {
		return new RateLimitEnforcer(this.limiter, new RateLimitPolicyRegistry(this.policies), this.rules,
				TestEnforcers::noBeans, FailureMode.OPEN);
	}

	static RateLimitResponses responses() {
		return new RateLimitResponses(RateLimitHeaders.ALL, new ProblemDetailRejectionHandler(), () -> NOW_MICROS / 1000);
	}

}
