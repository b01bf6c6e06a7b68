package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisTopDenials} on a Redis server of its own (the test freezes it): instances' summaries combined, stale
 * ones dropped by their time in the sorted set, and a silent Redis answered with this instance's summary within the
 * timeout, not the client's.
 */
class RedisTopDenialsTests {

	private static final String HASH = "rl:top:{api}";

	private static final String TIMES = HASH + ":at";

	private final RedisServer redis = RedisServer.start();

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@AfterEach
	void stop() {
		this.redis.thaw();
		this.factories.forEach(LettuceConnectionFactory::destroy);
		this.redis.close();
	}

	@Test
	void summariesOfEveryInstanceAddUpAndStaleOnesAreDroppedByTheirTime() {
		TopDenials firstLocal = denials("ip:a", "ip:a", "ip:b");
		TopDenials secondLocal = denials("ip:a");
		RedisTopDenials first = fleet(firstLocal);
		RedisTopDenials second = fleet(secondLocal);
		// a gone instance's field, stamped long ago
		this.redis.commands().hset(HASH, "gone", "{}");
		this.redis.commands().zadd(TIMES, 1, "gone");
		first.publish();
		second.publish();
		assertThat(this.redis.commands().hkeys(HASH)).hasSize(2).doesNotContain("gone");
		assertThat(this.redis.commands().zrange(TIMES, 0, -1)).hasSize(2).doesNotContain("gone");
		assertThat(this.redis.commands().pttl(HASH)).isPositive();
		assertThat(this.redis.commands().pttl(TIMES)).isPositive();
		assertThat(ClusterSlotHashUtil.calculateSlot(HASH)).isEqualTo(ClusterSlotHashUtil.calculateSlot(TIMES));
		TopDenials.Summary summary = first.summary("api");
		assertThat(summary.denials()).isEqualTo(4);
		assertThat(summary.identities()).containsEntry("ip:a", 3L).containsEntry("ip:b", 1L);

		// an instance whose summary emptied takes its field back from both keys
		secondLocal.stateReset(null, null);
		second.publish();
		assertThat(this.redis.commands().hkeys(HASH)).hasSize(1);
		assertThat(this.redis.commands().zrange(TIMES, 0, -1)).hasSize(1);
		assertThat(first.summary("api").denials()).isEqualTo(3);
	}

	@Test
	void aFrozenRedisIsAnsweredWithThisInstancesSummaryWithinTheTimeout() {
		RedisTopDenials top = fleet(denials("ip:a", "ip:a"));
		top.publish();
		this.redis.freeze();
		// the client would wait ten minutes: the calls answer while Redis is still frozen
		CompletableFuture<TopDenials.Summary> read = CompletableFuture.supplyAsync(() -> {
			top.publish();
			return top.summary("api");
		});
		Wait.until("the read answered", Duration.ofMinutes(2), read::isDone);
		assertThat(this.redis.isFrozen()).isTrue();
		assertThat(read.join().denials()).isEqualTo(2);
		assertThat(read.join().identities()).containsOnlyKeys("ip:a");
	}

	private static TopDenials denials(String... identities) {
		TopDenials top = new TopDenials(8, Duration.ofMinutes(10));
		for (String identity : identities) {
			top.record("api", identity);
		}
		return top;
	}

	/** An instance on a connection whose commands would wait ten minutes, its calls bounded by 200 ms. */
	private RedisTopDenials fleet(TopDenials local) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return new RedisTopDenials(factory, "rl:", local, 8, Duration.ofSeconds(2), Duration.ofMillis(200));
	}

}
