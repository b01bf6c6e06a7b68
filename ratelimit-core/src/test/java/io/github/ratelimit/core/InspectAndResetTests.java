package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What operators' tools need of a backend: one identity's state read without taking anything, the same figures a
 * request would see, and a reset after which the identity starts fresh; for every algorithm, on every backend.
 */
class InspectAndResetTests {

	private static final long T0 = Backends.Clock.T0 + 5_000_000L;

	private static RateLimitPolicy policy(Algorithm algorithm) {
		return RateLimitPolicy.builder("inspect-" + algorithm.code())
			.algorithm(algorithm)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.build();
	}

	private static RateLimitRequest request(RateLimitPolicy policy, String identity, long cost, long time) {
		return RateLimitRequest.builder().add(policy, identity, cost).at(time).build();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void inspectingReadsTheStateWithoutTakingAnything(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm);
			RateLimitBackend.Acquisition taken = backend.acquire(request(policy, "reader", 3, T0), "taker").block();
			assertThat(taken.decisions().get(0).remaining()).as(algorithm.id()).isEqualTo(7);
			for (int i = 0; i < 3; i++) {
				PolicyDecision read = backend.inspect(request(policy, "reader", 1, T0)).get(0);
				assertThat(read.allowed()).as(algorithm.id()).isTrue();
				assertThat(read.remaining()).as("%s: read %d", algorithm.id(), i).isEqualTo(7);
				assertThat(read.resetAfter()).as(algorithm.id()).isPositive();
			}
			// the reads took nothing: the next request sees the same state
			assertThat(backend.acquire(request(policy, "reader", 1, T0), "next").block().decisions().get(0).remaining())
				.as(algorithm.id())
				.isEqualTo(6);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void anInspectedDenialCarriesTheRetryAfterARequestWouldGet(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm);
			backend.acquire(request(policy, "full", 10, T0), "all").block();
			PolicyDecision read = backend.inspect(request(policy, "full", 1, T0 + 1_000)).get(0);
			PolicyDecision denied = backend.acquire(request(policy, "full", 1, T0 + 1_000), "denied").block()
				.decisions()
				.get(0);
			assertThat(read.allowed()).as(algorithm.id()).isFalse();
			assertThat(denied.allowed()).as(algorithm.id()).isFalse();
			assertThat(read.remaining()).as(algorithm.id()).isEqualTo(denied.remaining()).isZero();
			assertThat(read.retryAfter()).as(algorithm.id()).isEqualTo(denied.retryAfter()).isPositive();
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aResetIdentityStartsFreshAndLeavesOthersAlone(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = policy(algorithm);
			backend.acquire(request(policy, "reset", 10, T0), "all").block();
			backend.acquire(request(policy, "kept", 4, T0), "some").block();
			backend.reset(request(policy, "reset", 1, T0).entries());
			assertThat(backend.inspect(request(policy, "reset", 1, T0)).get(0).remaining()).as(algorithm.id())
				.isEqualTo(10);
			assertThat(backend.acquire(request(policy, "reset", 10, T0), "again").block().decisions().get(0).allowed())
				.as(algorithm.id())
				.isTrue();
			assertThat(backend.inspect(request(policy, "kept", 1, T0)).get(0).remaining()).as(algorithm.id())
				.isEqualTo(6);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Backends.class, names = { "REDIS", "REDIS_CLUSTER" })
	void aResetRemovesTheKeysOfEveryPolicyOfTheIdentityItNames(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		RateLimitPolicy a = policy(Algorithm.FIXED_WINDOW);
		RateLimitPolicy b = policy(Algorithm.SLIDING_WINDOW_LOG);
		fixture.backend.acquire(RateLimitRequest.builder().add(a, "x").add(b, "x").add(a, "y").at(T0).build(), "r").block();
		assertThat(fixture.keys()).hasSize(3);
		fixture.backend.reset(List.of(new RateLimitRequest.Entry(a, "x", 1), new RateLimitRequest.Entry(b, "x", 1)));
		assertThat(fixture.keys()).singleElement().asString().contains("{y}");
	}

}
