package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTests {

	private static final RateLimitPolicy PER_MINUTE = RateLimitPolicy.builder("per-minute")
		.algorithm(Algorithm.FIXED_WINDOW)
		.limit(100)
		.window(Duration.ofMinutes(1))
		.build();

	private static final RateLimitPolicy BURST = RateLimitPolicy.builder("burst")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(10)
		.window(Duration.ofMillis(1500))
		.build();

	private static final long NOW = 1_800_000_000_123L;

	private static PolicyDecision decision(RateLimitPolicy policy, boolean allowed, long remaining, Duration reset,
			Duration retry) {
		return new PolicyDecision(policy, "client", allowed, remaining, reset, retry);
	}

	@Test
	void allowedRequestCarriesTheMostRestrictivePolicyAndEveryPolicyInStructuredFields() {
		RateLimitDecision decision = new RateLimitDecision(List.of(
				decision(PER_MINUTE, true, 42, Duration.ofMillis(30_200), Duration.ZERO),
				decision(BURST, true, 3, Duration.ofMillis(800), Duration.ZERO)), Permit.NONE);
		HttpHeaders headers = RateLimitHeaders.ALL.of(decision, NOW);
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("1800000001"); // 1 800 000 000.923 rounded up
		assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"per-minute\";q=100;w=60, \"burst\";q=10;w=2");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"per-minute\";r=42;t=31, \"burst\";r=3;t=1");
		assertThat(headers.containsHeader("Retry-After")).isFalse();
	}

	@Test
	void deniedRequestGetsRetryAfterNeverEarlierThanAnyDenyingPolicysT() {
		RateLimitDecision decision = new RateLimitDecision(List.of(
				decision(PER_MINUTE, true, 42, Duration.ofSeconds(30), Duration.ZERO),
				decision(BURST, false, 0, Duration.ofMillis(1500), Duration.ofMillis(150))), Permit.NONE);
		HttpHeaders headers = RateLimitHeaders.ALL.of(decision, NOW);
		assertThat(headers.getFirst("Retry-After")).isEqualTo("1");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"per-minute\";r=42;t=30, \"burst\";r=0;t=1");
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("1800000001");
	}

	@Test
	void headerGroupsCanBeSwitchedOff() {
		RateLimitDecision decision = new RateLimitDecision(
				List.of(decision(BURST, false, 0, Duration.ofSeconds(1), Duration.ofMillis(2100))), Permit.NONE);
		assertThat(new RateLimitHeaders(false, true, true).of(decision, NOW).headerNames())
			.containsExactlyInAnyOrder("RateLimit-Policy", "RateLimit", "Retry-After");
		assertThat(new RateLimitHeaders(true, false, false).of(decision, NOW).headerNames())
			.containsExactlyInAnyOrder("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
		assertThat(RateLimitHeaders.ALL.of(decision, NOW).getFirst("Retry-After")).isEqualTo("3");
	}

	@Test
	void noPolicyNoHeaders() {
		assertThat(RateLimitHeaders.ALL.of(new RateLimitDecision(List.of(), Permit.NONE), NOW).isEmpty()).isTrue();
	}

}
