package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The state in a real Redis: the Lua twin of the pacing rule, shared by two instances, and its fallback. */
class SharedPartnerStateTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(2);

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<RedisServer> servers = new ArrayList<>();

	@AfterEach
	void stop() {
		this.factories.forEach(LettuceConnectionFactory::destroy);
		this.servers.forEach(RedisServer::stop);
	}

	private SharedPartnerState instance(RedisServer redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return new SharedPartnerState(factory, "rl:", TIMEOUT);
	}

	private static RedisServer flushed() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		return redis;
	}

	private static PartnerResponse quota(long remaining, long resetSeconds, long limit) {
		return new PartnerResponse(200,
				List.of(new PartnerQuota("p", "AQID", remaining, resetSeconds, limit, resetSeconds)), null);
	}

	@Test
	void whatOneInstanceLearnedPacesTheOther() {
		RedisServer redis = flushed();
		SharedPartnerState first = instance(redis);
		SharedPartnerState second = instance(redis);
		first.learn("pay", quota(2, 600, 100)).block();
		long a = second.reserve("pay", 0.5).block().toMillis();
		long b = first.reserve("pay", 0.5).block().toMillis();
		long c = second.reserve("pay", 0.5).block().toMillis();
		// 2 left over 600 s: the first turn now, the next two spread, the last after the reset
		assertThat(a).isZero();
		assertThat(b).isBetween(1L, 300_000L);
		assertThat(c).isGreaterThan(b).isLessThanOrEqualTo(600_000L);
		assertThat(redis.commands().hkeys("rl:client:{pay}")).containsExactly("e:p|AQID");
		// kept one window past the reset, for calls queued for it
		assertThat(redis.commands().pttl("rl:client:{pay}")).isBetween(1L, 1_200_000L);
		Map<String, Object> known = second.describe("pay").block();
		assertThat(known).extractingByKey("quotas").asString().contains("p|AQID", "remaining=0", "limit=100");
	}

	@Test
	void theEstimateInRedisNeverExceedsWhatThePartnerSaid() {
		RedisServer redis = flushed();
		SharedPartnerState state = instance(redis);
		state.learn("pay", quota(5, 600, 100)).block();
		state.reserve("pay", 0).block();
		state.reserve("pay", 0).block();
		// a reset no later than the stored one is the same window whatever the time between the two learns
		state.learn("pay", quota(4, 500, 100)).block();
		assertThat(state.describe("pay").block()).extractingByKey("quotas").asString().contains("remaining=3");
	}

	@Test
	void callsRefusedForTheirBudgetTakeNoTurnInRedis() {
		RedisServer redis = flushed();
		SharedPartnerState state = instance(redis);
		state.learn("pay", quota(2, 600, 100)).block();
		assertThat(state.reserve("pay", 1, Duration.ofMillis(100)).block()).isZero();
		for (int i = 0; i < 50; i++) {
			assertThat(state.reserve("pay", 1, Duration.ofMillis(100)).block()).isGreaterThan(Duration.ofMillis(100));
		}
		assertThat(state.describe("pay").block()).extractingByKey("quotas").asString().contains("remaining=1");
	}

	@Test
	void theKeyAlwaysExpiresAndAnEndedRetryAfterIsNotKept() {
		RedisServer redis = flushed();
		SharedPartnerState state = instance(redis);
		state.learn("pay", new PartnerResponse(429, List.of(), Duration.ZERO)).block();
		assertThat(redis.commands().pttl("rl:client:{pay}")).isNotEqualTo(-1L);
		assertThat(redis.commands().hexists("rl:client:{pay}", "blocked")).isFalse();
		state.learn("pay", quota(3, 0, 100)).block();
		assertThat(redis.commands().pttl("rl:client:{pay}")).isPositive();
	}

	@Test
	void aRetryAfterHoldsEveryInstance() {
		RedisServer redis = flushed();
		instance(redis).learn("pay", new PartnerResponse(429, List.of(), Duration.ofSeconds(30))).block();
		assertThat(instance(redis).reserve("pay", 0.5).block()).isPositive();
	}

	@Test
	void withRedisGoneTheInstancesOwnStateAnswers() {
		RedisServer redis = RedisServer.start();
		this.servers.add(redis);
		SharedPartnerState state = instance(redis);
		state.learn("pay", quota(0, 600, 100)).block();
		redis.kill();
		assertThat(state.reserve("pay", 0.5).block()).isPositive(); // none left: wait for the reset, known locally
		state.learn("pay", new PartnerResponse(429, List.of(), Duration.ofSeconds(700))).block();
		assertThat(state.describe("pay").block()).extractingByKey("retryAfterMillis").isNotEqualTo(0L);
	}

}
