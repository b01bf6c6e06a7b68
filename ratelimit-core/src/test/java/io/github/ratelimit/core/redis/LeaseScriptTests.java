package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.testkit.RedisServers;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code scripts/lease.lua} called directly on a real Redis, the way a replay after a reconnect, a re-send or a late
 * call reaches it: a call not newer than the instance's record writes nothing, a give-back refunds at most once and
 * never after a lapse or for another window, and a token bucket refills under the slices on record step by step.
 */
class LeaseScriptTests {

	private static final Duration SECOND = Duration.ofSeconds(1);

	private static LeaseInstances instances;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		instances = new LeaseInstances(RedisServers.standalone());
		redis = instances.template();
	}

	@AfterAll
	static void disconnect() {
		instances.close();
	}

	private static RateLimitPolicy bucket(long burst, long perSecond) {
		return RateLimitPolicy.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).limit(perSecond).window(SECOND)
			.burst(burst).build();
	}

	private static RateLimitPolicy window(long limit) {
		return RateLimitPolicy.builder("fw").algorithm(Algorithm.FIXED_WINDOW).limit(limit).window(Duration.ofHours(1))
			.build();
	}

	private static String key() {
		return "lease-script:" + UUID.randomUUID();
	}

	@SuppressWarnings("unchecked")
	private static LeaseCall.Reply call(String key, String[] args) {
		List<Long> reply = redis.execute(LuaScripts.LEASE, List.of(key), (Object[]) args);
		return LeaseCall.Reply.of(args[0].equals("t"), reply);
	}

	private static LeaseCall.Reply take(String key, RateLimitPolicy policy, String instance, long held, long window,
			long want, Duration lapse, long number) {
		return call(key, LeaseCall.take(policy, instance, held, window, want, 1, lapse.toNanos() / 1000, number));
	}

	private static @Nullable PackedBucket state(String key) {
		return PackedBucket.read(redis, key);
	}

	private static Map<String, PackedBucket.Slice> records(String key) {
		PackedBucket bucket = state(key);
		return (bucket != null) ? bucket.records() : Map.of();
	}

	/**
	 * The review's first reproduction: burst 100 at 50/s, A takes 50 (lapse 1 s), B takes 50 (lapse 5 s); after A's
	 * lapse a replay of B's take writes nothing and answers B's record, and C is granted only what refilled since A's
	 * lapse (the whole burst may have been spent just before it), not the refill from the start under the old cap.
	 */
	@Test
	void aReplayedTakeWritesNothingAndTheBucketRefillsOnlyFromTheLapse() {
		RateLimitPolicy policy = bucket(100, 50);
		String key = key();
		LeaseCall.Reply a = take(key, policy, "a", 0, -1, 50, SECOND, 1);
		String[] bTake = LeaseCall.take(policy, "b", 0, -1, 50, 1, 5_000_000, 1);
		LeaseCall.Reply b = call(key, bTake);
		assertThat(a.granted() + b.granted()).isEqualTo(100);
		long aLapse = a.timeMicros() + a.lapseAfterMicros();
		instances.awaitRedisTime(aLapse + 100_000);
		PackedBucket before = state(key);
		LeaseCall.Reply replay = call(key, bTake);
		assertThat(state(key)).isEqualTo(before);
		assertThat(replay.granted() + replay.kept()).isEqualTo(50);
		assertThat(replay.timeMicros() + replay.lapseAfterMicros()).isEqualTo(b.timeMicros() + b.lapseAfterMicros());
		LeaseCall.Reply c = take(key, policy, "c", 0, -1, 100, SECOND, 1);
		long refilled = (long) Math.ceil((c.timeMicros() - aLapse) * 50 / 1e6);
		assertThat(c.granted()).isLessThanOrEqualTo(refilled);
	}

	@Test
	void aTakeOvertakenByALaterOneWritesNothing() {
		RateLimitPolicy policy = bucket(100, 1);
		String key = key();
		take(key, policy, "a", 0, -1, 30, SECOND, 2);
		PackedBucket before = state(key);
		LeaseCall.Reply late = take(key, policy, "a", 30, -1, 30, SECOND, 1);
		assertThat(late.granted()).isZero();
		assertThat(state(key)).isEqualTo(before);
	}

	/**
	 * The review's second reproduction: limit 100 per window, A and B take 50 each, A's give-back of 50 delivered
	 * twice refunds once, so C is granted 50, not 100.
	 */
	@Test
	void aGiveBackDeliveredTwiceRefundsOnce() {
		instances.awayFromWindowEnd(Duration.ofHours(1));
		RateLimitPolicy policy = window(100);
		String key = key();
		LeaseCall.Reply a = take(key, policy, "a", 0, -1, 50, SECOND, 1);
		take(key, policy, "b", 0, -1, 50, SECOND, 1);
		String[] giveBack = LeaseCall.giveBack(policy, "a", 50, a.windowStart(), 2);
		call(key, giveBack);
		call(key, giveBack);
		assertThat(take(key, policy, "c", 0, -1, 100, SECOND, 1).granted()).isEqualTo(50);
	}

	@Test
	void aLateGiveBackLeavesTheNewerSliceOnRecord() {
		RateLimitPolicy policy = bucket(100, 1);
		String key = key();
		take(key, policy, "a", 0, -1, 40, SECOND, 1);
		String[] giveBack = LeaseCall.giveBack(policy, "a", 40, -1, 2);
		call(key, giveBack);
		take(key, policy, "a", 0, -1, 40, SECOND, 3);
		PackedBucket before = state(key);
		call(key, giveBack);
		assertThat(state(key)).isEqualTo(before);
		assertThat(take(key, policy, "b", 0, -1, 100, SECOND, 1).granted()).isEqualTo(60);
	}

	@Test
	void aGiveBackAfterTheLapseRefundsNothing() {
		instances.awayFromWindowEnd(Duration.ofHours(1));
		for (RateLimitPolicy policy : List.of(bucket(100, 1), window(100))) {
			String key = key();
			LeaseCall.Reply a = take(key, policy, "a", 0, -1, 100, Duration.ofMillis(100), 1);
			instances.awaitRedisTime(a.timeMicros() + a.lapseAfterMicros());
			LeaseCall.Reply back = call(key, LeaseCall.giveBack(policy, "a", 100, a.windowStart(), 2));
			assertThat(back.remaining()).as(policy.name()).isLessThanOrEqualTo(1);
		}
	}

	@Test
	void aGiveBackNamingAnEarlierWindowRefundsNothing() {
		instances.awayFromWindowEnd(Duration.ofHours(1));
		RateLimitPolicy policy = window(100);
		String key = key();
		LeaseCall.Reply a = take(key, policy, "a", 0, -1, 60, SECOND, 1);
		long earlier = a.windowStart() - policy.windowMicros();
		LeaseCall.Reply back = call(key, LeaseCall.giveBack(policy, "a", 60, earlier, 2));
		assertThat(back.remaining()).isEqualTo(40);
	}

	/** A fully spent slice given back as 0 clears its record: the bucket refills to the whole burst again. */
	@Test
	void aSpentSliceGivenBackAsNothingClearsItsRecord() {
		RateLimitPolicy policy = bucket(100, 1);
		String key = key();
		take(key, policy, "a", 0, -1, 100, Duration.ofHours(1), 1);
		assertThat(records(key)).containsKey("a");
		call(key, LeaseCall.giveBack(policy, "a", 0, -1, 2));
		assertThat(records(key)).doesNotContainKey("a");
	}

	/**
	 * Step by step: records lapsing at different times each raise the cap only from their lapse on; a take after the
	 * first lapse gets what refilled since then under the cap of the record still held.
	 */
	@Test
	void theBucketRefillsUnderTheRecordsStepByStep() {
		RateLimitPolicy policy = bucket(100, 50);
		String key = key();
		LeaseCall.Reply a = take(key, policy, "a", 0, -1, 60, Duration.ofMillis(500), 1);
		LeaseCall.Reply b = take(key, policy, "b", 0, -1, 40, Duration.ofHours(1), 1);
		assertThat(a.granted() + b.granted()).isEqualTo(100);
		long aLapse = a.timeMicros() + a.lapseAfterMicros();
		instances.awaitRedisTime(aLapse);
		LeaseCall.Reply c = take(key, policy, "c", 0, -1, 100, SECOND, 1);
		long refilled = (long) Math.ceil((c.timeMicros() - aLapse) * 50 / 1e6);
		assertThat(c.granted()).isLessThanOrEqualTo(Math.min(60, refilled));
	}

	/** A record holds its instance id's length in one byte: a longer id is refused, and writes nothing. */
	@Test
	void anInstanceIdOfMoreThan255BytesIsRefused() {
		RateLimitPolicy policy = bucket(100, 1);
		String key = key();
		String longest = "a".repeat(255);
		assertThat(take(key, policy, longest, 0, -1, 10, SECOND, 1).granted()).isEqualTo(10);
		assertThat(records(key)).containsOnlyKeys(longest);
		PackedBucket before = state(key);
		assertThatThrownBy(() -> take(key, policy, "b".repeat(256), 0, -1, 10, SECOND, 1))
			.hasStackTraceContaining("an instance id of more than 255 bytes (256)");
		assertThat(state(key)).isEqualTo(before);
	}

}
