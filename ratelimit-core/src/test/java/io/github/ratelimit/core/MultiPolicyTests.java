package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * All policies of a request are evaluated together: admitted only when all admit, and a denial by one takes no
 * quota from the others, for one identity (one atomic script) and for several identities (on Cluster, several
 * slots).
 */
class MultiPolicyTests {

	private final Backends.Clock clock = new Backends.Clock();

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(Duration.ofMinutes(1)).build();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aDenialByOnePolicyTakesNothingFromTheOthersOfTheSameIdentity(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy perMinute = policy("per-minute", Algorithm.FIXED_WINDOW, 5);
		RateLimitPolicy burst = policy("burst", Algorithm.TOKEN_BUCKET, 2);
		RateLimitPolicy log = policy("log", Algorithm.SLIDING_WINDOW_LOG, 4);
		RateLimitPolicy gcra = policy("gcra", Algorithm.GCRA, 3);
		RateLimitPolicy inFlight = policy("in-flight", Algorithm.CONCURRENCY, 10);
		RateLimitPolicy counter = policy("counter", Algorithm.SLIDING_WINDOW_COUNTER, 6);
		RateLimitRequest request = RateLimitRequest.builder()
			.add(perMinute, "alice")
			.add(burst, "alice")
			.add(log, "alice")
			.add(gcra, "alice")
			.add(inFlight, "alice")
			.add(counter, "alice")
			.at(this.clock.now())
			.build();
		assertThat(limiter.check(request).allowed()).isTrue();
		assertThat(limiter.check(request).allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			RateLimitDecision denied = limiter.check(request);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.deciding().orElseThrow().policy()).isEqualTo(burst);
			assertThat(denied.decisions()).filteredOn(PolicyDecision::allowed).hasSize(5);
		}
		// each of the others took exactly the two admitted requests
		RateLimitDecision last = limiter.check(RateLimitRequest.builder()
			.add(perMinute, "alice")
			.add(log, "alice")
			.add(gcra, "alice")
			.add(inFlight, "alice")
			.add(counter, "alice")
			.at(this.clock.now())
			.build());
		assertThat(last.allowed()).isTrue();
		assertThat(last.decisions()).extracting(PolicyDecision::remaining).containsExactly(2L, 1L, 0L, 7L, 3L);
		assertThat(last.deciding().orElseThrow().policy()).as("least remaining decides").isEqualTo(gcra);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aDenialForOneIdentityGivesBackWhatTheOtherIdentitiesTook(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy perIp = policy("per-ip", Algorithm.SLIDING_WINDOW_LOG, 100);
		RateLimitPolicy perKey = policy("per-key", Algorithm.FIXED_WINDOW, 3);
		RateLimitPolicy inFlight = policy("ip-in-flight", Algorithm.CONCURRENCY, 100);
		String ip = "203.0.113.7";
		String apiKey = "key-7";
		if (kind == Backends.REDIS_CLUSTER) {
			assertThat(ClusterSlotHashUtil.calculateSlot("{" + ip + "}"))
				.as("the two identities must live in different slots for this test")
				.isNotEqualTo(ClusterSlotHashUtil.calculateSlot("{" + apiKey + "}"));
		}
		RateLimitRequest request = RateLimitRequest.builder()
			.add(perIp, ip)
			.add(inFlight, ip)
			.add(perKey, apiKey)
			.at(this.clock.now())
			.build();
		for (int i = 0; i < 3; i++) {
			assertThat(limiter.check(request).allowed()).isTrue();
		}
		for (int i = 0; i < 10; i++) {
			RateLimitDecision denied = limiter.check(request);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.decisions().get(0).remaining()).as("per-ip before this request").isEqualTo(97);
		}
		RateLimitDecision ipOnly = limiter
			.check(RateLimitRequest.builder().add(perIp, ip).add(inFlight, ip).at(this.clock.now()).build());
		assertThat(ipOnly.decisions()).extracting(PolicyDecision::remaining)
			.as("the ten denied requests took nothing from the ip's policies")
			.containsExactly(96L, 96L);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void theSamePolicyAndIdentityTwiceCountsOnceAtTheHigherCost(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitPolicy policy = policy("twice", Algorithm.FIXED_WINDOW, 10);
		RateLimitRequest request = RateLimitRequest.builder()
			.add(policy, "bob")
			.add(policy, "bob", 3)
			.at(this.clock.now())
			.build();
		assertThat(request.entries()).hasSize(1);
		RateLimitDecision decision = limiter.check(request);
		assertThat(decision.decisions()).hasSize(1);
		assertThat(decision.decisions().get(0).remaining()).isEqualTo(7);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void anAdmittedRequestCanBeReversedCompletely(Backends kind) {
		RateLimiter limiter = kind.fresh().limiter;
		RateLimitRequest.Builder builder = RateLimitRequest.builder().at(this.clock.now());
		for (Algorithm algorithm : Algorithm.values()) {
			builder.add(policy("undo-" + algorithm.code(), algorithm, 4), "carol", 2);
		}
		RateLimitRequest request = builder.build();
		RateLimitDecision first = limiter.check(request);
		assertThat(first.decisions()).extracting(PolicyDecision::remaining).containsOnly(2L);
		first.reversal().release();
		first.reversal().release(); // idempotent
		first.permit().release(); // the concurrency permit was given back with the reversal: no double refund
		RateLimitDecision second = limiter.check(request);
		assertThat(second.decisions()).extracting(PolicyDecision::remaining)
			.as("the reversed request took nothing")
			.containsOnly(2L);
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void anEmptyRequestIsAdmittedWithoutABackendCall(Backends kind) {
		RateLimitDecision decision = kind.fresh().limiter.check(RateLimitRequest.builder().build());
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.deciding()).isEmpty();
	}

}
