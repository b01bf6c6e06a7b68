package io.github.ratelimit.core.redis;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStringCommands;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token bucket's state as one packed string under its own key name ({@code t2}): its TTL, refunds made once,
 * leases' records and their TTL kept by the exact scripts' writes, and a 0.1.0 hash at the old name left alone by
 * decisions but deleted by a reset.
 */
class TokenBucketStateTests {

	private static final long T0 = 1_700_000_000_000_000L;

	private static final Map<Object, Object> RELEASED_EMPTY = Map.of("t", "0", "s", "1700000000000000");

	private static LeaseInstances instances;

	private static LettuceConnectionFactory factory;

	private static RedisRateLimitBackend exact;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		var server = RedisServers.standalone();
		instances = new LeaseInstances(server);
		redis = instances.template();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		exact = RedisRateLimitBackend.builder(factory).build();
	}

	@AfterAll
	static void disconnect() {
		exact.stop();
		factory.destroy();
		instances.close();
	}

	/** burst tokens, one a {@code refillEvery}: slow enough that nothing refills while a test runs. */
	private static RateLimitPolicy bucket(long burst, Duration refillEvery) {
		return RateLimitPolicy.builder("bucket-" + UUID.randomUUID()).algorithm(Algorithm.TOKEN_BUCKET).limit(1)
			.window(refillEvery).burst(burst).build();
	}

	private static Acquisition acquire(RateLimitRequest request, String requestId) {
		Acquisition acquisition = exact.acquire(request, requestId).block();
		assertThat(acquisition).isNotNull();
		return acquisition;
	}

	private static int drain(RateLimitPolicy policy, String identity) {
		int admitted = 0;
		while (acquire(RateLimitRequest.of(policy, identity), "r").decisions().get(0).allowed()) {
			admitted++;
		}
		return admitted;
	}

	@Test
	void theKeyIsNewAndItsTtlEndsOnceTheBucketWouldBeFullAgain() {
		RateLimitPolicy policy = bucket(10, Duration.ofSeconds(10));
		acquire(RateLimitRequest.builder().add(policy, "ttl", 3).build(), "r");
		String key = exact.key(policy, "ttl");
		assertThat(key).endsWith(":t2");
		assertThat(redis.type(key)).isEqualTo(DataType.STRING);
		// three tokens refill in 30 s: the TTL is that and at most a second more
		assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS)).isBetween(29_000L, 31_000L);
		assertLivesUntilFull(policy, key);
		PackedBucket bucket = PackedBucket.read(redis, key);
		assertThat(bucket).isNotNull();
		assertThat(bucket.tokens()).isEqualTo(7);
		assertThat(bucket.refunded()).isEqualTo(-1);
		assertThat(bucket.records()).isEmpty();
	}

	/** 1,000 tokens per 10 s, burst 2,000: a token refills in 10 ms, a full bucket in 20 s. */
	private static RateLimitPolicy busy() {
		return RateLimitPolicy.builder("busy-" + UUID.randomUUID())
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(1000)
			.window(Duration.ofSeconds(10))
			.burst(2000)
			.build();
	}

	/** Requests of the policy at a cost, alone (the single-entry script) or beside another policy (the driver). */
	private static IntFunction<RateLimitRequest> taking(RateLimitPolicy policy, String path) {
		RateLimitPolicy other = bucket(10, Duration.ofSeconds(1));
		return (cost) -> path.equals("single") ? RateLimitRequest.builder().add(policy, path, cost).build()
				: RateLimitRequest.builder().add(policy, path, cost).add(other, path, 1).build();
	}

	/**
	 * A write keeps the key's TTL while it covers the bucket's fill time and sets it again (fill time and a second)
	 * when it does not. A TTL put by hand shows which: a longer one than needed kept, a shorter one replaced.
	 */
	@Test
	void aWriteKeepsTheKeysTtlWhileItCoversTheFillTime() {
		RateLimitPolicy policy = busy();
		for (String path : List.of("single", "driver")) {
			IntFunction<RateLimitRequest> taking = taking(policy, path);
			String key = exact.key(policy, path);
			acquire(taking.apply(1), "r");
			// 10 ms to refill and a second
			assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS)).as(path).isPositive().isLessThanOrEqualTo(1_010L);
			assertLivesUntilFull(policy, key);
			redis.expire(key, Duration.ofHours(1));
			// a fill time of about a second: an hour covers it
			acquire(taking.apply(100), "r");
			assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS)).as(path).isGreaterThan(3_000_000L);
			redis.expire(key, Duration.ofSeconds(2));
			// about 16 s (15 s if the two seconds ran out first): set again, to that and a second
			acquire(taking.apply(1500), "r");
			assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS)).as(path).isBetween(2_000L, 17_010L);
			assertLivesUntilFull(policy, key);
		}
	}

	/**
	 * A state counted at a later time than the server's clock (written before a failover to a server whose clock is
	 * behind): nothing refills before that time, so the key lives its fill time from there, on every path.
	 */
	@Test
	void aStateAheadOfTheClockKeepsItsKeyUntilItsBucketIsFull() {
		RateLimitPolicy policy = busy();
		for (String path : List.of("single", "driver", "lease")) {
			String key = exact.key(policy, path);
			long ahead = instances.redisMicros() + 60_000_000;
			redis.execute((RedisCallback<Object>) (connection) -> connection.stringCommands()
				.set(key.getBytes(StandardCharsets.UTF_8), ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
					.putDouble(500).putDouble(ahead).array(), Expiration.seconds(30),
						RedisStringCommands.SetOption.upsert()));
			if (path.equals("lease")) {
				// a slice lapsing at once: the state's time, not the lapse, bounds the TTL
				String[] take = LeaseCall.take(policy, "a", 0, -1, 5, 1, 1000, 1);
				assertThat(redis.execute(LuaScripts.LEASE, List.of(key), (Object[]) take)).isNotEmpty();
			}
			else {
				acquire(taking(policy, path).apply(1), "r");
			}
			PackedBucket bucket = assertLivesUntilFull(policy, key);
			assertThat(bucket.time()).as(path).isEqualTo((double) ahead);
		}
	}

	/** After a lease's take and give-back, and an exact write between them, the key lives until its bucket is full. */
	@Test
	void aLeasedKeyLivesUntilItsBucketIsFullAfterEveryWrite() {
		RateLimitPolicy policy = busy();
		String key = exact.key(policy, "leased");
		long lapse = Duration.ofSeconds(10).toNanos() / 1000;
		assertThat(redis.execute(LuaScripts.LEASE, List.of(key),
				(Object[]) LeaseCall.take(policy, "a", 0, -1, 1500, 1, lapse, 1))).isNotEmpty();
		assertLivesUntilFull(policy, key);
		acquire(RateLimitRequest.builder().add(policy, "leased", 400).build(), "r");
		assertLivesUntilFull(policy, key);
		assertThat(redis.execute(LuaScripts.LEASE, List.of(key),
				(Object[]) LeaseCall.giveBack(policy, "a", 1000, -1, 2))).isNotEmpty();
		assertLivesUntilFull(policy, key);
	}

	/**
	 * The key expires no earlier than its bucket would be full again: its time and fill time, within the millisecond
	 * a TTL is counted in. PTTL is read before TIME, so a pause between the two can only make the key look longer-lived.
	 */
	@SuppressWarnings("unchecked")
	private static PackedBucket assertLivesUntilFull(RateLimitPolicy policy, String key) {
		List<Long> clock = redis.execute(RedisScript.of("local p = redis.call('PTTL', KEYS[1]) local t = "
				+ "redis.call('TIME') return { tonumber(t[1]) * 1000000 + tonumber(t[2]), p }", List.class),
				List.of(key));
		PackedBucket bucket = PackedBucket.read(redis, key);
		assertThat(bucket).isNotNull();
		assertThat(clock.get(1)).as("PTTL").isPositive();
		double windowMicros = policy.window().toNanos() / 1000.0;
		double full = bucket.time() + Math.ceil((policy.burst() - bucket.tokens()) * windowMicros / policy.limit());
		long expires = clock.get(0) / 1000 + clock.get(1);
		assertThat((double) expires).as("the key's expiry (ms)").isGreaterThanOrEqualTo(Math.ceil(full / 1000) - 1);
		return bucket;
	}

	@Test
	void aRefundIsMadeOnceAndACommitAtTheSameTimeKeepsItsMark() {
		RateLimitPolicy policy = bucket(10, Duration.ofHours(1));
		RateLimitRequest request = RateLimitRequest.builder().add(policy, "once", 1).at(T0).build();
		Acquisition first = acquire(request, "first");
		exact.release(request.entries(), "first", first.entryTimesMicros(), first.entrySequences()).block();
		String key = exact.key(policy, "once");
		assertThat(PackedBucket.read(redis, key)).extracting(PackedBucket::tokens, PackedBucket::refunded)
			.containsExactly(10.0, (double) T0);
		long ttl = redis.getExpire(key, TimeUnit.MILLISECONDS);
		// a second acquire at the same time rewrites the tokens and keeps the mark: the first refund, sent again,
		// gives nothing
		acquire(request, "second");
		exact.release(request.entries(), "first", first.entryTimesMicros(), first.entrySequences()).block();
		PackedBucket bucket = PackedBucket.read(redis, key);
		assertThat(bucket).isNotNull();
		assertThat(bucket.tokens()).isEqualTo(9);
		assertThat(bucket.refunded()).isEqualTo((double) T0);
		assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS)).isPositive().isLessThanOrEqualTo(ttl + 1_000);
	}

	@Test
	void leasedAndExactRequestsOfOneKeyCountTogether() {
		RateLimitPolicy policy = bucket(100, Duration.ofHours(1));
		LeasingBackend leased = instances.start(
				Map.of(policy.name(), new LeaseSettings(30, Duration.ofMinutes(10), Duration.ofMinutes(10))));
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			admitted += LeaseInstances.admits(leased, policy, "shared") ? 1 : 0;
		}
		String key = exact.key(policy, "shared");
		admitted += drain(policy, "shared");
		// the exact scripts' writes kept the leased instance's record
		PackedBucket bucket = PackedBucket.read(redis, key);
		assertThat(bucket).isNotNull();
		assertThat(bucket.records()).containsOnlyKeys(leased.instance());
		admitted += LeaseInstances.drain(leased, policy, "shared");
		assertThat(admitted).isEqualTo(100);
	}

	/**
	 * A lease's TTL covers its record's lapse; an exact acquire on the key (an instance without the lease, or a
	 * request with an explicit time) keeps it, where the bucket's own fill time would let the key, and the record
	 * with it, expire first: one token a second refills a taken token in a second, the record lapses in an hour.
	 */
	@Test
	void anExactAcquireKeepsTheTtlOfALeasesRecord() {
		RateLimitPolicy policy = bucket(10, Duration.ofSeconds(1));
		RateLimitPolicy other = bucket(10, Duration.ofSeconds(1));
		assertTtlCoversTheLease(policy, "single", RateLimitRequest.builder().add(policy, "single", 1).build());
		assertTtlCoversTheLease(policy, "driver",
				RateLimitRequest.builder().add(policy, "driver", 1).add(other, "driver", 1).build());
		assertTtlCoversTheLease(policy, "explicit", RateLimitRequest.builder().add(policy, "explicit", 1).at(T0).build());
	}

	@SuppressWarnings("unchecked")
	private static void assertTtlCoversTheLease(RateLimitPolicy policy, String identity, RateLimitRequest request) {
		String key = exact.key(policy, identity);
		String[] take = LeaseCall.take(policy, "a", 0, -1, 5, 1, Duration.ofHours(1).toNanos() / 1000, 1);
		assertThat(redis.execute(LuaScripts.LEASE, List.of(key), (Object[]) take)).isNotEmpty();
		assertThat(acquire(request, "r").decisions()).allMatch((decision) -> decision.allowed());
		PackedBucket bucket = PackedBucket.read(redis, key);
		assertThat(bucket).isNotNull();
		double lapse = bucket.records().get("a").lapse();
		assertThat(redis.getExpire(key, TimeUnit.MILLISECONDS) * 1000.0).as(identity)
			.isGreaterThanOrEqualTo(lapse - instances.redisMicros());
	}

	/** A 0.1.0 instance's empty bucket of a policy and an identity: a hash under the old name, {@code tb}. */
	private static String releasedEmptyBucket(RateLimitPolicy policy, String identity) {
		String old = RateLimitKeys.DEFAULT_PREFIX + "{" + identity + "}:" + policy.name() + ":tb";
		redis.opsForHash().putAll(old, RELEASED_EMPTY);
		return old;
	}

	@Test
	void aHashOfTheReleasedLayoutUnderTheOldNameIsLeftAlone() {
		RateLimitPolicy policy = bucket(5, Duration.ofHours(1));
		String identity = "upgrade-" + UUID.randomUUID();
		// the new layout never reads 0.1.0's hash, and never writes where 0.1.0 reads
		String old = releasedEmptyBucket(policy, identity);
		assertThat(drain(policy, identity)).isEqualTo(5);
		assertThat(redis.type(old)).isEqualTo(DataType.HASH);
		assertThat(redis.opsForHash().entries(old)).isEqualTo(RELEASED_EMPTY);
		assertThat(redis.keys("*{" + identity + "}*")).containsExactlyInAnyOrder(old, exact.key(policy, identity));
	}

	@Test
	void aResetOfAnIdentityAlsoDeletesTheReleasedLayoutsKey() {
		RateLimitPolicy policy = bucket(5, Duration.ofHours(1));
		String identity = "reset-" + UUID.randomUUID();
		// during a rolling upgrade 0.1.0 instances count the identity under the old name: a reset reaches them too
		releasedEmptyBucket(policy, identity);
		assertThat(drain(policy, identity)).isEqualTo(5);
		exact.reset(RateLimitRequest.of(policy, identity).entries());
		assertThat(redis.keys("*{" + identity + "}*")).isEmpty();
		assertThat(drain(policy, identity)).isEqualTo(5);
	}

}
