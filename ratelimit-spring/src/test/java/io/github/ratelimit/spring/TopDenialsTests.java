package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy's summary over its window of two halves (on a clock the test moves, never showing a denial older than the
 * window), what a decision records (the stored form of the identity, its tier), resets, the merging of several
 * instances' summaries and their published form.
 */
class TopDenialsTests {

	private final AtomicLong nanos = new AtomicLong();

	private final TopDenials top = new TopDenials(4, Duration.ofSeconds(60), this.nanos::get);

	@Test
	void denialsCountForBetweenHalfTheWindowAndAllOfIt() {
		this.top.record("api", "ip:a");
		advance(Duration.ofSeconds(31));
		this.top.record("api", "ip:b");
		assertThat(this.top.summary("api").identities()).containsOnlyKeys("ip:a", "ip:b");
		// a's half is the previous one now, then gone
		advance(Duration.ofSeconds(30));
		assertThat(this.top.summary("api").identities()).containsOnlyKeys("ip:b");
		advance(Duration.ofSeconds(61));
		assertThat(this.top.summary("api")).satisfies((summary) -> {
			assertThat(summary.denials()).isZero();
			assertThat(summary.identities()).isEmpty();
		});
	}

	@Test
	void aDenialOlderThanTheWindowIsNeverShown() {
		Map<String, Long> recordedAt = new HashMap<>();
		for (int step = 0; step < 100; step++) {
			String identity = "ip:" + step;
			this.top.record("api", identity);
			recordedAt.put(identity, this.nanos.get());
			for (String shown : this.top.summary("api").identities().keySet()) {
				assertThat(this.nanos.get() - recordedAt.get(shown)).as("%s at step %d", shown, step)
					.isLessThan(Duration.ofSeconds(60).toNanos());
			}
			advance(Duration.ofSeconds(7));
		}
	}

	@Test
	void anIdentityIsKeptInTheFormTheLimiterKeysIt() {
		String huge = "header.x-api-key:" + "k".repeat(8192);
		this.top.record("api", huge);
		this.top.record("api", "ip:a");
		assertThat(this.top.summary("api").identities()).containsOnlyKeys(RateLimitKeys.digest(huge), "ip:a");
		assertThat(RateLimitKeys.digest(huge)).hasSizeLessThan(50);
		// a reset names the identity as the application sees it
		this.top.stateReset("api", huge);
		assertThat(this.top.summary("api").identities()).containsOnlyKeys("ip:a");
	}

	@Test
	void theTierThatRefusedAnIdentityIsKeptWithIt() {
		RateLimitPolicy gold = RateLimitPolicy.builder("api")
			.algorithm(Algorithm.GCRA)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.tier("gold")
			.build();
		RateLimitRequest.Entry a = new RateLimitRequest.Entry(gold, "principal:a", 1);
		this.top.record(new RateLimitDecision(List.of(PolicyDecision.of(a, false, 0, 0, 1000)), Permit.NONE));
		this.top.record("api", "principal:b");
		TopDenials.Summary summary = this.top.summary("api");
		assertThat(summary.tiers()).isEqualTo(Map.of("principal:a", "gold"));
		TopDenials.Summary other = new TopDenials.Summary(3, Map.of("principal:a", 3L),
				Map.of("principal:a", "gold"), 1);
		assertThat(TopDenials.Summary.merge(List.of(summary, other), 4).tiers())
			.isEqualTo(Map.of("principal:a", "gold"));
		assertThat(TopDenials.Summary.merge(List.of(summary, other), 1).tiers()).containsOnlyKeys("principal:a");
	}

	@Test
	void aSummaryReadsBackFromItsPublishedFormAndOneWithoutTiersReadsAsNone() {
		TopDenials.Summary summary = new TopDenials.Summary(3, Map.of("principal:a", 3L),
				Map.of("principal:a", "gold"), 1);
		String published = JsonMapper.shared().writeValueAsString(summary);
		assertThat(RedisTopDenials.parse(published)).isEqualTo(summary);
		assertThat(RedisTopDenials.parse("{\"denials\":2,\"identities\":{\"ip:a\":2},\"instances\":1}"))
			.isEqualTo(new TopDenials.Summary(2, Map.of("ip:a", 2L), Map.of(), 1));
	}

	@Test
	void onlyRefusalsByQuotaAreRecorded() {
		RateLimitPolicy api = RateLimitPolicy.builder("api").algorithm(Algorithm.GCRA).limit(1).window(Duration.ofMinutes(1)).build();
		RateLimitPolicy other = RateLimitPolicy.builder("other").algorithm(Algorithm.GCRA).limit(1).window(Duration.ofMinutes(1)).build();
		RateLimitRequest.Entry a = new RateLimitRequest.Entry(api, "ip:a", 1);
		RateLimitRequest.Entry b = new RateLimitRequest.Entry(other, "ip:a", 1);
		this.top.record(new RateLimitDecision(List.of(PolicyDecision.of(a, true, 0, 0, 0)), Permit.NONE));
		this.top.record(new RateLimitDecision(
				List.of(PolicyDecision.of(a, true, 0, 0, 0), PolicyDecision.of(b, false, 0, 0, 1000)), Permit.NONE));
		this.top.record(new RateLimitDecision(List.of(PolicyDecision.failedClosed(a, Duration.ofSeconds(1))),
				Permit.NONE));
		assertThat(this.top.summary("api").denials()).isZero();
		assertThat(this.top.summary("other").identities()).isEqualTo(Map.of("ip:a", 1L));
	}

	@Test
	void aResetForgetsWhatItNamesAndTellsTheHook() {
		AtomicInteger told = new AtomicInteger();
		this.top.onReset(told::incrementAndGet);
		this.top.record("api", "ip:a");
		this.top.record("api", "ip:b");
		this.top.record("web", "ip:a");
		this.top.stateReset("api", "ip:a");
		assertThat(this.top.summary("api").identities()).containsOnlyKeys("ip:b");
		assertThat(this.top.summary("web").identities()).containsOnlyKeys("ip:a");
		this.top.stateReset(null, "ip:a");
		assertThat(this.top.summary("web").identities()).isEmpty();
		this.top.stateReset(null, null);
		assertThat(this.top.policies()).isEmpty();
		assertThat(told).hasValue(3);
	}

	@Test
	void summariesOfSeveralInstancesAddUp() {
		TopDenials.Summary one = new TopDenials.Summary(10, Map.of("ip:a", 6L, "ip:b", 4L), Map.of(), 1);
		TopDenials.Summary two = new TopDenials.Summary(5, Map.of("ip:b", 5L), Map.of(), 1);
		TopDenials.Summary both = TopDenials.Summary.merge(List.of(one, two), 1);
		assertThat(both.denials()).isEqualTo(15);
		assertThat(both.instances()).isEqualTo(2);
		assertThat(both.identities()).isEqualTo(Map.of("ip:b", 9L));
	}

	@Test
	void memoryStaysBoundedWhateverTheNumberOfIdentities() {
		for (int i = 0; i < 100_000; i++) {
			this.top.record("api", "ip:" + i);
		}
		assertThat(this.top.counters()).isLessThanOrEqualTo(2 * 4);
		assertThat(this.top.summary("api").denials()).isEqualTo(100_000);
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

}
