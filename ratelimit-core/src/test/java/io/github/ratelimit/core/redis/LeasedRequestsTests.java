package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.ratelimit.core.redis.LeaseInstances.admits;
import static io.github.ratelimit.core.redis.LeaseInstances.drain;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leased policies in requests of several policies, given back when idle, and spent while Redis is unreachable, on a
 * real Redis.
 */
class LeasedRequestsTests {

	private final RedisServer redis = RedisServers.standalone();

	private final LeaseInstances instances = new LeaseInstances(this.redis);

	@AfterEach
	void close() {
		this.instances.close();
	}

	/** A fixed window of an hour, used by a test that runs within one (waiting out one ending within a minute). */
	private RateLimitPolicy fixedWindow(String name, long limit) {
		this.instances.awayFromWindowEnd(Duration.ofHours(1));
		return RateLimitPolicy.builder(name).algorithm(Algorithm.FIXED_WINDOW).limit(limit).window(Duration.ofHours(1))
			.failureMode(FailureMode.CLOSED).build();
	}

	private static Map<String, LeaseSettings> leased(RateLimitPolicy policy, long slice, Duration idle) {
		return Map.of(policy.name(), new LeaseSettings(slice, Duration.ofMinutes(10), idle));
	}

	private static boolean admitsAll(LeasingBackend backend, RateLimitRequest request) {
		// a request id of its own, as every request has: a give-back is made once per id
		return backend.acquire(request, UUID.randomUUID().toString()).block().decisions().stream()
			.allMatch((d) -> d.allowed());
	}

	private static boolean admitsOrFails(LeasingBackend backend, RateLimitPolicy policy, String identity) {
		try {
			return admits(backend, policy, identity);
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static RateLimitRequest both(RateLimitPolicy leased, RateLimitPolicy exact, String identity) {
		return RateLimitRequest.builder().add(leased, identity).add(exact, identity).build();
	}

	private static void deniedRepeatedly(LeasingBackend backend, RateLimitRequest request) {
		for (int i = 0; i < 5; i++) {
			assertThat(admitsAll(backend, request)).isFalse();
		}
	}

	/** A request the exact policy denies spends nothing of the leased one: its whole limit is still there. */
	@Test
	void aLeasedEntrySpendsOnlyWhenTheOtherEntriesAdmit() {
		RateLimitPolicy leasedPolicy = fixedWindow("leased-part", 100);
		RateLimitPolicy exact = fixedWindow("exact-part", 2);
		LeasingBackend backend = this.instances.start(leased(leasedPolicy, 10, Duration.ofMinutes(10)));
		String identity = UUID.randomUUID().toString();
		RateLimitRequest both = both(leasedPolicy, exact, identity);
		assertThat(admitsAll(backend, both)).isTrue();
		assertThat(admitsAll(backend, both)).isTrue();
		deniedRepeatedly(backend, both);
		assertThat(drain(backend, leasedPolicy, identity)).isEqualTo(98);
	}

	/** When the leased entry denies, what the other entries took is given back: their limit is whole again. */
	@Test
	void whenTheLeasedEntryDeniesTheOthersAreGivenBack() {
		RateLimitPolicy leasedPolicy = fixedWindow("leased-part", 3);
		RateLimitPolicy exact = fixedWindow("exact-part", 2);
		LeasingBackend backend = this.instances.start(leased(leasedPolicy, 3, Duration.ofMinutes(10)));
		String identity = UUID.randomUUID().toString();
		assertThat(drain(backend, leasedPolicy, identity)).isEqualTo(3);
		RateLimitRequest both = both(leasedPolicy, exact, identity);
		deniedRepeatedly(backend, both);
		assertThat(drain(backend, exact, identity)).isEqualTo(2);
	}

	/** An instance that stops sending requests of a key gives its slice back: the other instance then has it. */
	@Test
	void anIdleSliceIsGivenBack() {
		RateLimitPolicy policy = fixedWindow("leased-idle", 50);
		LeasingBackend holder = this.instances.start(leased(policy, 50, Duration.ofMillis(100)));
		LeasingBackend other = this.instances.start(leased(policy, 50, Duration.ofMillis(100)));
		String identity = UUID.randomUUID().toString();
		assertThat(admits(holder, policy, identity)).isTrue();
		long[] admitted = new long[1];
		Wait.until("the idle slice is given back", Duration.ofSeconds(30), () -> {
			admitted[0] += drain(other, policy, identity);
			return admitted[0] == 49;
		});
		assertThat(drain(holder, policy, identity)).isZero();
	}

	/**
	 * Redis unreachable (a blackhole): what the slice in hand holds is still admitted, as Redis' own decisions; once
	 * it is spent, the policy's failure mode decides (closed: refused). Redis back: enforced again.
	 */
	@Test
	void aSliceInHandIsSpentWhileRedisIsUnreachableThenTheFailureModeDecides() {
		RateLimitPolicy policy = fixedWindow("leased-outage", 1000);
		try (TcpProxy proxy = TcpProxy.start(this.redis.address());
				LeaseInstances proxied = new LeaseInstances(proxy.address().host(), proxy.port())) {
			LeasingBackend backend = proxied.start(Map.of(policy.name(),
					new LeaseSettings(10, Duration.ofSeconds(5), Duration.ofSeconds(5))));
			String identity = UUID.randomUUID().toString();
			RateLimitRequest request = RateLimitRequest.of(policy, identity);
			// the first take connects, which a loaded machine may do slower than any budget: taken unguarded, so
			// that the limiter's breaker has seen no failure
			Wait.until("a slice taken", Duration.ofSeconds(30), () -> admitsOrFails(backend, policy, identity));
			RateLimiter limiter = DefaultRateLimiter.builder(backend).timeout(Duration.ofMillis(200)).build();
			proxy.blackhole();
			int enforced = 0;
			RateLimitDecision decision = limiter.check(request);
			while (decision.allowed()) {
				assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
				enforced++;
				decision = limiter.check(request);
			}
			// at least the slice (10) less the request that took it; takes that landed after their budget add to it
			assertThat(enforced).isGreaterThanOrEqualTo(9);
			assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_CLOSED);
			proxy.restore();
			Wait.until("enforced again once Redis answers", Duration.ofSeconds(30), () -> {
				RateLimitDecision after = limiter.check(request);
				return after.allowed() && after.decisions().get(0).enforcement() == Enforcement.ENFORCED;
			});
		}
	}

}
