package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential check: a random trace of multi-policy requests over every algorithm, with explicit time, replayed on
 * the local backend and on Redis, must get the same decisions, figure for figure.
 */
class BackendAgreementTests {

	static List<Backends> redisKinds() {
		return Backends.redis();
	}

	/** The backend the trace runs on; {@link FunctionsModeConformanceTests} runs it on Redis functions. */
	Backends.Fixture fixture(Backends kind) {
		return kind.fresh();
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void localAndRedisMakeTheSameDecisions(Backends kind) {
		RateLimiter redis = fixture(kind).limiter;
		RateLimiter local = new DefaultRateLimiter(new LocalRateLimitBackend());
		List<RateLimitPolicy> policies = List.of(
				RateLimitPolicy.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).limit(7).window(Duration.ofMillis(700)).burst(12).build(),
				RateLimitPolicy.builder("gc").algorithm(Algorithm.GCRA).limit(9).window(Duration.ofMillis(1300)).burst(4).build(),
				RateLimitPolicy.builder("sl").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(6).window(Duration.ofMillis(900))
					.minInterval(Duration.ofMillis(20)).build(),
				RateLimitPolicy.builder("sc").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(11).window(Duration.ofMillis(1000)).build(),
				RateLimitPolicy.builder("fw").algorithm(Algorithm.FIXED_WINDOW).limit(8).window(Duration.ofMillis(500)).build(),
				RateLimitPolicy.builder("cc").algorithm(Algorithm.CONCURRENCY).limit(3).window(Duration.ofMillis(400)).build());
		List<String> identities = List.of("u1", "u2", "u3", "a very {odd} identity\n");
		Random random = new Random(20261121L);
		long now = Backends.Clock.T0 + 123_457L;
		List<Permit[]> held = new ArrayList<>();
		int admitted = 0;
		for (int step = 0; step < 1500; step++) {
			now += random.nextInt(40_000);
			RateLimitRequest request;
			try {
				RateLimitRequest.Builder builder = RateLimitRequest.builder().at(now);
				int count = 1 + random.nextInt(3);
				for (int i = 0; i < count; i++) {
					RateLimitPolicy policy = policies.get(random.nextInt(policies.size()));
					long cost = 1 + random.nextInt((int) Math.min(3, policy.capacity()));
					builder.add(policy, identities.get(random.nextInt(identities.size())), cost);
				}
				request = builder.build();
			}
			catch (IllegalArgumentException ex) {
				continue; // the same policy and identity drawn twice, costs added beyond the capacity
			}
			RateLimitDecision onRedis = redis.check(request);
			RateLimitDecision onLocal = local.check(request);
			if (kind == Backends.REDIS) {
				assertThat(onRedis.decisions()).as("step %d: %s", step, request.entries())
					.isEqualTo(onLocal.decisions());
			}
			else {
				assertAgreeUpToRefundRounding(onRedis, onLocal, "step " + step + ": " + request.entries());
			}
			if (onRedis.allowed()) {
				admitted++;
				held.add(new Permit[] { onRedis.permit(), onLocal.permit() });
			}
			if (!held.isEmpty() && random.nextInt(3) == 0) {
				Permit[] permits = held.remove(random.nextInt(held.size()));
				permits[0].release();
				permits[1].release();
			}
		}
		assertThat(admitted).as("the trace must exercise both outcomes").isBetween(200, 1300);
	}

	/**
	 * On Cluster, entries of identities in different slots run as separate scripts, and a slot that admitted is
	 * given its cost back when another slot denied. Taking and giving back a fractional token count is exact only
	 * up to floating-point rounding, so durations may differ by a microsecond; admissions and remaining counts
	 * (computed with a tolerance far above that rounding) must still agree exactly.
	 */
	private static void assertAgreeUpToRefundRounding(RateLimitDecision redis, RateLimitDecision local, String step) {
		assertThat(redis.allowed()).as(step).isEqualTo(local.allowed());
		for (int i = 0; i < local.decisions().size(); i++) {
			PolicyDecision expected = local.decisions().get(i);
			PolicyDecision actual = redis.decisions().get(i);
			assertThat(actual.allowed()).as(step).isEqualTo(expected.allowed());
			assertThat(actual.remaining()).as(step).isEqualTo(expected.remaining());
			assertThat(actual.resetAfter().minus(expected.resetAfter()).abs()).as(step)
				.isLessThanOrEqualTo(Duration.ofNanos(1000));
			assertThat(actual.retryAfter().minus(expected.retryAfter()).abs()).as(step)
				.isLessThanOrEqualTo(Duration.ofNanos(1000));
		}
	}

}
