package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.github.ratelimit.core.redis.LeaseInstances.admits;
import static io.github.ratelimit.core.redis.LeaseInstances.drain;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leased quotas on a real Redis: two instances under concurrency never admit above the limit, what one gives back
 * on stop the other can use at once, and a token bucket never refills into the slices instances hold.
 */
class LeasedQuotaTests {

	private final LeaseInstances instances = new LeaseInstances(RedisServers.standalone());

	@AfterEach
	void close() {
		this.instances.close();
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("leased-" + algorithm.code()).algorithm(algorithm).limit(limit).window(window)
			.build();
	}

	private static String identity() {
		return UUID.randomUUID().toString();
	}

	/**
	 * Eight threads over two instances, one key: what both admit together stays within the limit (the token
	 * bucket's refill during the run added, measured over a span that contains the run), and once both gave back
	 * on stop, a fresh instance admits exactly what is left: nothing was lost.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "FIXED_WINDOW" })
	void twoInstancesUnderConcurrencyNeverAdmitAboveTheLimit(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = policy(algorithm, 600, Duration.ofHours(1));
		this.instances.awayFromWindowEnd(policy.window());
		Map<String, LeaseSettings> leases = Map.of(policy.name(),
				new LeaseSettings(40, Duration.ofSeconds(30), Duration.ofMillis(50)));
		LeasingBackend first = this.instances.start(leases);
		LeasingBackend second = this.instances.start(leases);
		List<RateLimiter> limiters = List.of(new DefaultRateLimiter(first), new DefaultRateLimiter(second));
		String identity = identity();
		AtomicLong admitted = new AtomicLong();
		long started = System.nanoTime();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		List<Future<?>> done = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			RateLimiter limiter = limiters.get(t % 2);
			done.add(threads.submit(() -> {
				for (int i = 0; i < 150; i++) {
					RateLimitDecision decision = limiter.check(RateLimitRequest.of(policy, identity));
					if (decision.allowed()) {
						admitted.incrementAndGet();
					}
				}
			}));
		}
		for (Future<?> future : done) {
			future.get();
		}
		threads.shutdown();
		first.stop();
		second.stop();
		long refill = refillDuring(policy, started);
		assertThat(admitted.get()).isLessThanOrEqualTo(600 + refill);
		LeasingBackend third = this.instances.start(leases);
		long afterwards = drain(third, policy, identity);
		// everything given back is there: the two instances and the third admitted the whole limit together
		assertThat(admitted.get() + afterwards).isBetween(600L, 600 + refillDuring(policy, started));
	}

	/** An upper bound of what a token bucket refilled since then (a fixed window: nothing, its window is an hour). */
	private static long refillDuring(RateLimitPolicy policy, long startedNanos) {
		if (policy.algorithm() != Algorithm.TOKEN_BUCKET) {
			return 0;
		}
		double elapsedMicros = (System.nanoTime() - startedNanos) / 1000.0;
		return (long) Math.ceil(elapsedMicros * policy.limit() / policy.windowMicros()) + 1;
	}

	/** A slice given back on stop is there for the other instance at once: no waiting for a lapse or a window. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "FIXED_WINDOW" })
	void aSliceGivenBackOnStopIsUsableByTheOtherInstanceAtOnce(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 100, Duration.ofHours(1));
		this.instances.awayFromWindowEnd(policy.window());
		LeasingBackend holder = this.instances.start(wholeQuotaSlices(policy));
		LeasingBackend other = this.instances.start(wholeQuotaSlices(policy));
		String identity = identity();
		assertThat(admits(holder, policy, identity)).isTrue();
		// the holder took the whole quota in one slice: the other instance gets nothing
		assertThat(drain(other, policy, identity)).isZero();
		holder.stop();
		assertThat(drain(other, policy, identity)).isEqualTo(99);
	}

	/**
	 * The token bucket's case: an instance takes the whole burst and spends one; the bucket would have refilled
	 * since, but not into the slice the instance holds, so when the other instance and the holder then spend all
	 * they can, together they admit no more than the burst and what refilled meanwhile. Without the record, the
	 * other instance would find a full bucket and both would admit almost twice the burst.
	 */
	@Test
	void aTokenBucketNeverRefillsIntoTheSlicesInstancesHold() throws InterruptedException {
		RateLimitPolicy policy = policy(Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(2));
		LeasingBackend holder = this.instances.start(wholeQuotaSlices(policy));
		LeasingBackend other = this.instances.start(wholeQuotaSlices(policy));
		String identity = identity();
		assertThat(admits(holder, policy, identity)).isTrue();
		// longer than the bucket takes to refill completely
		Thread.sleep(2_500);
		long started = System.nanoTime();
		long others = drain(other, policy, identity);
		long holders = drain(holder, policy, identity);
		assertThat(holders).isGreaterThanOrEqualTo(99);
		assertThat(others + holders).isLessThanOrEqualTo(100 + refillDuring(policy, started));
	}

	/**
	 * On a Cluster (the lease script goes to the master of its key's slot): two instances taking turns admit no more
	 * than the limit, and once both gave back on stop, a third admits exactly the rest.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "FIXED_WINDOW" })
	void twoInstancesOnAClusterShareTheLimit(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 100, Duration.ofHours(1));
		Map<String, LeaseSettings> leases = Map.of(policy.name(),
				new LeaseSettings(10, Duration.ofMinutes(10), Duration.ofMinutes(10)));
		try (LeaseInstances cluster = new LeaseInstances(RedisServers.cluster())) {
			cluster.awayFromWindowEnd(policy.window());
			LeasingBackend first = cluster.start(leases);
			LeasingBackend second = cluster.start(leases);
			String identity = identity();
			long started = System.nanoTime();
			long admitted = 0;
			boolean any = true;
			while (any) {
				boolean one = admits(first, policy, identity);
				boolean two = admits(second, policy, identity);
				admitted += (one ? 1 : 0) + (two ? 1 : 0);
				any = one || two;
			}
			first.stop();
			second.stop();
			assertThat(admitted).isLessThanOrEqualTo(100 + refillDuring(policy, started));
			long rest = drain(cluster.start(leases), policy, identity);
			assertThat(admitted + rest).isBetween(100L, 100 + refillDuring(policy, started));
		}
	}

	/** Slices of the whole quota, kept for ten minutes unless given back on stop. */
	private static Map<String, LeaseSettings> wholeQuotaSlices(RateLimitPolicy policy) {
		return Map.of(policy.name(), new LeaseSettings(policy.capacity(), Duration.ofMinutes(10),
				Duration.ofMinutes(10)));
	}

	/** Figures stay truthful: remaining counts this instance's slice and what Redis had left, never above the limit. */
	@Test
	void remainingIsTheSliceAndWhatRedisHadLeft() {
		RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
		this.instances.awayFromWindowEnd(policy.window());
		LeasingBackend backend = this.instances.start(Map.of(policy.name(),
				new LeaseSettings(10, Duration.ofMinutes(10), Duration.ofMinutes(10))));
		String identity = identity();
		Acquisition acquisition = backend.acquire(RateLimitRequest.of(policy, identity), "r").block();
		assertThat(acquisition).isNotNull();
		PolicyDecision decision = acquisition.decisions().get(0);
		// a slice of 10 taken, one spent: 9 here and 90 in Redis
		assertThat(decision.remaining()).isEqualTo(99);
		assertThat(decision.resetAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
	}

	/** A runtime override lowering the limit: the slice taken under the old one goes back, the new limit holds. */
	@Test
	void aSliceTakenUnderLimitsAnOverrideChangedIsHandedBack() {
		RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 1000, Duration.ofHours(1));
		this.instances.awayFromWindowEnd(policy.window());
		RateLimitPolicy lowered = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		LeasingBackend backend = this.instances.start(Map.of(policy.name(),
				new LeaseSettings(100, Duration.ofMinutes(10), Duration.ofMinutes(10))));
		String identity = identity();
		assertThat(admits(backend, policy, identity)).isTrue();
		// one spent of the slice of 100; the other 99 go back, and 9 are left under the limit of 10
		assertThat(drain(backend, lowered, identity)).isEqualTo(9);
	}

	/** A leased admission released (a refused or cancelled request) goes back into the slice: nothing is used up. */
	@Test
	void aReleasedLeasedAdmissionGoesBackIntoTheSlice() {
		RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		this.instances.awayFromWindowEnd(policy.window());
		LeasingBackend backend = this.instances.start(Map.of(policy.name(),
				new LeaseSettings(10, Duration.ofMinutes(10), Duration.ofMinutes(10))));
		String identity = identity();
		RateLimitRequest request = RateLimitRequest.of(policy, identity);
		Acquisition acquisition = backend.acquire(request, "refused").block();
		assertThat(acquisition).isNotNull();
		assertThat(acquisition.decisions().get(0).allowed()).isTrue();
		backend.release(request.entries(), "refused", acquisition.entryTimesMicros(), acquisition.entrySequences())
			.block();
		// released twice (a duplicate): put back once
		backend.release(request.entries(), "refused", acquisition.entryTimesMicros(), acquisition.entrySequences())
			.block();
		assertThat(drain(backend, policy, identity)).isEqualTo(10);
	}

}
