package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.testkit.FixedWindows;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Giving back what an admitted request took (a reversal, a concurrency permit, a Cluster request that another slot
 * denied): at most once per request, never more than the request still holds, and into the window it was counted
 * in, on the clock of the server that counted it.
 */
class RefundTests {

	private static final long T0 = Backends.Clock.T0;

	private static final long SECOND = 1_000_000L;

	private static RateLimitRequest request(RateLimitPolicy policy, String identity, long time) {
		return RateLimitRequest.builder().add(policy, identity, 1).at(time).build();
	}

	private static long remaining(RateLimitBackend backend, RateLimitPolicy policy, String identity, long time,
			String requestId) {
		return backend.acquire(request(policy, identity, time), requestId).block().decisions().get(0).remaining();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aReleaseMadeAgainGivesNothingMore(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy policy = RateLimitPolicy.builder("again-" + algorithm.code())
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofMinutes(1))
				.build();
			long t = T0 + 5 * SECOND;
			RateLimitBackend.Acquisition first = backend.acquire(request(policy, "retry", t), "first").block();
			RateLimitBackend.Acquisition second = backend.acquire(request(policy, "retry", t), "second").block();
			assertThat(first.decisions().get(0).allowed()).isTrue();
			assertThat(second.decisions().get(0).allowed()).isTrue();
			List<RateLimitRequest.Entry> entries = request(policy, "retry", t).entries();
			// the first release ran, its answer was lost, it is sent again
			backend.release(entries, "first", first.entryTimesMicros(), first.entrySequences()).block();
			backend.release(entries, "first", first.entryTimesMicros(), first.entrySequences()).block();
			// exactly the first request's one unit came back, once: the second one's stays taken (the probe takes
			// one). The buckets were last written at the first request's time, so they know no refill absorbed it.
			assertThat(remaining(backend, policy, "retry", t, "probe")).as(algorithm.id()).isEqualTo(8);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aBucketRefundedOnceGivesBackALaterRequestToo(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.GCRA }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("twice-" + algorithm.code())
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofHours(1))
				.build();
			long t = T0 + 5 * SECOND;
			List<RateLimitRequest.Entry> entries = request(policy, "twice", t).entries();
			RateLimitBackend.Acquisition first = backend.acquire(request(policy, "twice", t), "first").block();
			backend.release(entries, "first", first.entryTimesMicros(), first.entrySequences()).block();
			// the mark of the first refund (its time) does not stop the refund of a request of another time
			RateLimitBackend.Acquisition second = backend.acquire(request(policy, "twice", t + SECOND), "second").block();
			assertThat(second.decisions().get(0).remaining()).as(algorithm.id()).isEqualTo(9);
			backend.release(entries, "second", second.entryTimesMicros(), second.entrySequences()).block();
			backend.release(entries, "second", second.entryTimesMicros(), second.entrySequences()).block();
			assertThat(remaining(backend, policy, "twice", t + SECOND, "probe")).as(algorithm.id()).isEqualTo(9);
			// nor does the first one's refund, made again, give anything now that the bucket was written later
			backend.release(entries, "first", first.entryTimesMicros(), first.entrySequences()).block();
			assertThat(remaining(backend, policy, "twice", t + SECOND, "probe-2")).as(algorithm.id()).isEqualTo(8);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void theLatestRequestOfABucketGetsExactlyItsCostBack(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.GCRA }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("latest-" + algorithm.code())
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofSeconds(10))
				.build();
			long t = T0 + 5 * SECOND;
			backend.acquire(request(policy, "last", t), "one").block();
			RateLimitBackend.Acquisition two = backend.acquire(request(policy, "last", t + SECOND / 2), "two").block();
			backend.release(request(policy, "last", t).entries(), "two", two.entryTimesMicros(), two.entrySequences()).block();
			// as if "two" had never come: one taken at t, half a token refilled since
			assertThat(remaining(backend, policy, "last", t + SECOND / 2, "probe")).as(algorithm.id()).isEqualTo(8);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aBucketThatRefilledToItsCapHasNothingOfAnOldRequestToGiveBack(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.GCRA }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("cap-" + algorithm.code())
				.algorithm(algorithm)
				.limit(1)
				.window(Duration.ofSeconds(1))
				.burst(10)
				.build();
			long t = T0 + 5 * SECOND;
			RateLimitBackend.Acquisition early = backend.acquire(request(policy, "cap", t), "early").block();
			// two seconds on the bucket is full again: the early request holds nothing any more
			assertThat(backend.acquire(request(policy, "cap", t + 2 * SECOND), "later").block().decisions().get(0).remaining())
				.isEqualTo(9);
			backend.release(request(policy, "cap", t).entries(), "early", early.entryTimesMicros(), early.entrySequences()).block();
			assertThat(remaining(backend, policy, "cap", t + 2 * SECOND, "probe")).as(algorithm.id()).isEqualTo(8);
		}
	}

	@Test
	void aClusterReversalGivesEachSlotBackOnItsOwnClock() throws Exception {
		Backends.Fixture fixture = Backends.REDIS_CLUSTER.fresh();
		RedisClusterServer cluster = RedisServers.cluster();
		RateLimitKeys keys = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);
		RateLimitPolicy policy = RateLimitPolicy.builder("boundary")
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(10)
			.window(Duration.ofSeconds(1))
			.build();
		String first = "slot-a";
		String second = pickOnAnotherMaster(cluster, keys, policy, first);
		HostAndPort secondMaster = cluster.masterForKey(keys.key(policy, second));
		for (boolean reactive : new boolean[] { false, true }) {
			fixture.flush();
			// the first slot counts just before a second's boundary; the second slot's master is frozen across it, so
			// it counts in the next window
			awaitMillisIntoSecond(700);
			cluster.freeze(secondMaster);
			CompletableFuture<Void> thaw = CompletableFuture.runAsync(() -> {
				sleep(600);
				cluster.thaw(secondMaster);
			});
			RateLimitRequest request = RateLimitRequest.builder().add(policy, first).add(policy, second).build();
			RateLimitDecision decision = reactive ? fixture.limiter.checkAsync(request).block(Duration.ofSeconds(10))
					: fixture.limiter.check(request);
			thaw.get(10, TimeUnit.SECONDS);
			assertThat(decision.allowed()).isTrue();
			decision.reversal().release();
			// the second slot's key counts the next window (the first slot's has expired with its window by now)
			String count = (String) fixture.redis().opsForHash().get(keys.key(policy, second), "c");
			assertThat(count).as("reactive: %s: the count went back to the window it was counted in", reactive)
				.isEqualTo("0");
		}
	}

	@Test
	void aClusterGiveBackThatFailsLeavesTheDenialAndEveryOtherGiveBack() throws Exception {
		Backends.Fixture fixture = Backends.REDIS_CLUSTER.fresh();
		RedisClusterServer cluster = RedisServers.cluster();
		RateLimitKeys keys = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);
		RateLimitPolicy policy = RateLimitPolicy.builder("give-back")
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(10)
			.window(Duration.ofHours(1))
			.build();
		List<HostAndPort> masters = cluster.masters();
		String broken = onMaster(cluster, keys, policy, masters.get(0), "broken");
		String kept = onMaster(cluster, keys, policy, masters.get(1), "kept");
		String denying = onMaster(cluster, keys, policy, masters.get(2), "denying");
		// the fixed window's counts read below must all fall in one hour
		FixedWindows.awayFromWindowEnd(policy.window(), Duration.ofSeconds(30));
		for (boolean reactive : new boolean[] { false, true }) {
			fixture.flush();
			for (int i = 0; i < 10; i++) {
				fixture.limiter.check(RateLimitRequest.of(policy, denying));
			}
			// the denying slot's master is frozen while the two others admit; meanwhile the first admitted slot's key
			// is replaced by a string, so giving it back fails (WRONGTYPE) once the denial arrives
			HostAndPort frozen = cluster.masterForKey(keys.key(policy, denying));
			cluster.freeze(frozen);
			CompletableFuture<Void> breakAndThaw = CompletableFuture.runAsync(() -> {
				try {
					Wait.until(Duration.ofSeconds(10), () -> "1".equals(
							fixture.redis().opsForHash().get(keys.key(policy, broken), "c")) && "1".equals(
									fixture.redis().opsForHash().get(keys.key(policy, kept), "c")));
					fixture.redis().delete(keys.key(policy, broken));
					fixture.redis().opsForValue().set(keys.key(policy, broken), "not a hash");
				}
				finally {
					cluster.thaw(frozen);
				}
			});
			RateLimitRequest request = RateLimitRequest.builder()
				.add(policy, broken)
				.add(policy, kept)
				.add(policy, denying)
				.build();
			DefaultRateLimiter limiter = (DefaultRateLimiter) fixture.limiter;
			long failedBefore = limiter.errorCount(BackendErrorKind.GIVE_BACK_FAILED);
			RateLimitDecision decision = reactive ? limiter.checkAsync(request).block(Duration.ofSeconds(20))
					: limiter.check(request);
			breakAndThaw.get(20, TimeUnit.SECONDS);
			assertThat(limiter.errorCount(BackendErrorKind.GIVE_BACK_FAILED))
				.as("reactive: %s: the failed give-back is counted (ratelimit.errors{kind=give_back_failed})", reactive)
				.isEqualTo(failedBefore + 1);
			assertThat(decision).isNotNull();
			assertThat(decision.allowed()).as("reactive: %s: still a denial", reactive).isFalse();
			assertThat(decision.decisions().get(2).allowed()).isFalse();
			assertThat(fixture.redis().opsForHash().get(keys.key(policy, kept), "c"))
				.as("reactive: %s: the slot after the failed one was given back", reactive)
				.isEqualTo("0");
		}
	}

	static String onMaster(RedisClusterServer cluster, RateLimitKeys keys, RateLimitPolicy policy,
			HostAndPort master, String prefix) {
		for (int i = 0;; i++) {
			String candidate = prefix + i;
			if (cluster.masterForKey(keys.key(policy, candidate)).equals(master)) {
				return candidate;
			}
		}
	}

	private static String pickOnAnotherMaster(RedisClusterServer cluster, RateLimitKeys keys, RateLimitPolicy policy,
			String first) {
		HostAndPort master = cluster.masterForKey(keys.key(policy, first));
		for (int i = 0;; i++) {
			String candidate = "slot-b" + i;
			String key = keys.key(policy, candidate);
			if (!cluster.masterForKey(key).equals(master)
					&& ClusterSlotHashUtil.calculateSlot(key) != ClusterSlotHashUtil.calculateSlot(keys.key(policy, first))) {
				return candidate;
			}
		}
	}

	private static void awaitMillisIntoSecond(int millis) {
		long now = System.currentTimeMillis() % 1000;
		sleep((now <= millis) ? millis - now : 1000 - now + millis);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
