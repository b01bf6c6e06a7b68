package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leased policies on a three-master Cluster without replicas ({@code cluster-require-full-coverage no}), one master
 * killed or frozen, two instances (limiters with connections of their own) sharing the limits: the keys of the live
 * masters still lease and are held to their limit exactly; a key of the dead master spends what its slice held, then
 * follows its policy's failure mode (open, closed, local: the fallback counting what the slice admitted); once the
 * master is back (restarted or thawed), its keys lease again. Every figure is a count: the budget is generous and
 * nothing depends on speed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LeasedClusterOutageTests {

	/** Generous, so that no decision here depends on how fast a loaded machine answers. */
	private static final Duration BUDGET = Duration.ofSeconds(3);

	static final int LIMIT = 12;

	/** Slices of four at most, that never lapse during the test; given back after 100 ms idle. */
	private static final LeaseSettings LEASE = new LeaseSettings(4, Duration.ofMinutes(1), Duration.ofMillis(100));

	private static final RateLimitPolicy OPEN = policy("leased-open", FailureMode.OPEN);

	private static final RateLimitPolicy CLOSED = policy("leased-closed", FailureMode.CLOSED);

	private static final RateLimitPolicy LOCAL = policy("leased-local", FailureMode.LOCAL);

	private static final List<RateLimitPolicy> POLICIES = List.of(OPEN, CLOSED, LOCAL);

	/** A busy key's leased policy: slices of a thousand, never spent nor given back while a test runs. */
	private static final RateLimitPolicy BUSY = busy("leased-busy");

	/** Not leased: a Redis call per decision. */
	private static final RateLimitPolicy EXACT = policy("exact-closed", FailureMode.CLOSED);

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final List<DefaultRateLimiter> instances = new ArrayList<>();

	private final AtomicLong fresh = new AtomicLong();

	private RedisClusterServer cluster;

	@AfterEach
	void stop() throws Exception {
		ClusterFactories.closeBackwards(this.resources);
	}

	/** How the master goes: killed (then restarted, empty), or frozen (then thawed, its data kept). */
	enum Outage {

		KILLED, FROZEN;

		void begin(RedisClusterServer cluster, HostAndPort master) {
			if (this == KILLED) {
				cluster.killMaster(master);
			}
			else {
				cluster.freeze(master);
			}
		}

		void end(RedisClusterServer cluster, HostAndPort master) {
			if (this == KILLED) {
				cluster.restart(master);
			}
			else {
				cluster.thaw(master);
			}
		}

	}

	@ParameterizedTest
	@EnumSource(Outage.class)
	void theLiveMastersKeepLeasingTheDeadMastersKeysFollowTheirFailureModeAndLeaseAgainOnceItIsBack(Outage outage) {
		this.cluster = RedisClusterServer.start(3, 0, false);
		this.resources.add(this.cluster);
		this.instances.add(instance());
		this.instances.add(instance());
		List<HostAndPort> masters = this.cluster.masters();
		HostAndPort dead = masters.get(0);
		// before: one instance takes slices on every master, two requests per key
		Map<HostAndPort, Map<RateLimitPolicy, String>> before = new HashMap<>();
		for (HostAndPort master : masters) {
			for (RateLimitPolicy policy : POLICIES) {
				String identity = identityOn(policy, master);
				before.computeIfAbsent(master, (m) -> new HashMap<>()).put(policy, identity);
				for (int i = 0; i < 2; i++) {
					RateLimitDecision decision = check(0, policy, identity);
					assertThat(decision.allowed()).isTrue();
					assertThat(enforcement(decision)).isEqualTo(Enforcement.ENFORCED);
				}
			}
		}
		outage.begin(this.cluster, dead);
		for (HostAndPort live : masters.subList(1, masters.size())) {
			for (RateLimitPolicy policy : POLICIES) {
				assertThat(drainTogether(policy, before.get(live).get(policy))).as("%s on %s", policy.name(), live)
					.isEqualTo(LIMIT - 2);
				assertThat(drainTogether(policy, identityOn(policy, live))).as("%s on %s", policy.name(), live)
					.isEqualTo(LIMIT);
			}
		}
		deadMastersKeysFollowTheirFailureMode(dead, before.get(dead));
		outage.end(this.cluster, dead);
		// once its breaker lets a probe through, on both instances
		Wait.until("a key of the restarted master decided by Redis", Duration.ofSeconds(90),
				() -> enforcement(check(0, OPEN, identityOn(OPEN, dead))) == Enforcement.ENFORCED
						&& enforcement(check(1, OPEN, identityOn(OPEN, dead))) == Enforcement.ENFORCED);
		for (RateLimitPolicy policy : POLICIES) {
			assertThat(drainOnceRedisDecides(policy, dead)).as("%s on the restarted master", policy.name())
				.isEqualTo(LIMIT);
		}
	}

	@Test
	void leasedRequestsForADeadMastersKeyAnsweredFromTheirSliceDoNotCloseItsProbingCircuit() {
		this.cluster = RedisClusterServer.start(3, 0, false);
		this.resources.add(this.cluster);
		DefaultRateLimiter limiter = instance(Duration.ofMillis(500));
		List<HostAndPort> masters = this.cluster.masters();
		HostAndPort dead = masters.get(0);
		RateLimitRequest leased = RateLimitRequest.of(BUSY, identityOn(BUSY, dead));
		assertThat(limiter.check(leased).allowed()).isTrue(); // a slice of a thousand
		for (HostAndPort live : masters.subList(1, masters.size())) {
			assertThat(enforcement(limiter.check(RateLimitRequest.of(EXACT, identityOn(EXACT, live)))))
				.isEqualTo(Enforcement.ENFORCED);
		}
		this.cluster.killMaster(dead);
		CircuitBreaker breaker = breakerOf(limiter, dead);
		String exactOnDead = identityOn(EXACT, dead);
		Wait.until("the dead master's circuit open", Duration.ofSeconds(120), () -> {
			assertThat(limiter.check(RateLimitRequest.of(EXACT, exactOnDead)).failedClosed()).isTrue();
			return breaker.getState() == CircuitBreaker.State.OPEN;
		});
		List<CircuitBreaker.StateTransition> transitions = new CopyOnWriteArrayList<>();
		breaker.getEventPublisher().onStateTransition((event) -> transitions.add(event.getStateTransition()));
		// each open wait, the leased key's permitted calls are answered from the slice and the breaker hears a
		// probe of the dead master instead, which fails
		Wait.until("a probe of the dead master heard", Duration.ofSeconds(60), () -> {
			limiter.check(leased);
			return transitions.contains(CircuitBreaker.StateTransition.HALF_OPEN_TO_OPEN);
		});
		assertThat(transitions).doesNotContain(CircuitBreaker.StateTransition.HALF_OPEN_TO_CLOSED);
		assertThat(breaker.getState()).isNotEqualTo(CircuitBreaker.State.CLOSED);
		for (HostAndPort live : masters.subList(1, masters.size())) {
			assertThat(breakerOf(limiter, live).getState()).as("%s", live).isEqualTo(CircuitBreaker.State.CLOSED);
		}
	}

	private static CircuitBreaker breakerOf(DefaultRateLimiter limiter, HostAndPort master) {
		String name = "ratelimit-redis@" + master.host() + ":" + master.port();
		return Objects.requireNonNull(limiter.circuitBreakers())
			.getAllCircuitBreakers()
			.stream()
			.filter((breaker) -> breaker.getName().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no breaker named " + name));
	}

	/**
	 * A fresh key of the dead master gets its failure mode from the first request; a key with a slice spends it
	 * first (from Redis, decided before the kill), and the local fallback counts those admissions too.
	 */
	private void deadMastersKeysFollowTheirFailureMode(HostAndPort dead, Map<RateLimitPolicy, String> before) {
		String open = identityOn(OPEN, dead);
		String closed = identityOn(CLOSED, dead);
		String local = identityOn(LOCAL, dead);
		int locallyAdmitted = 0;
		for (int i = 0; i < LIMIT + 3; i++) {
			RateLimitDecision opened = check(0, OPEN, open);
			assertThat(opened.allowed()).isTrue();
			assertThat(enforcement(opened)).isEqualTo(Enforcement.FAILED_OPEN);
			RateLimitDecision refused = check(0, CLOSED, closed);
			assertThat(refused.failedClosed()).isTrue();
			RateLimitDecision fallback = check(0, LOCAL, local);
			assertThat(enforcement(fallback)).isEqualTo(Enforcement.LOCAL_FALLBACK);
			locallyAdmitted += fallback.allowed() ? 1 : 0;
		}
		assertThat(locallyAdmitted).as("the local fallback's own count").isEqualTo(LIMIT);
		int admitted = 2;
		for (int i = 0; i < LIMIT + 3; i++) {
			RateLimitDecision decision = check(0, LOCAL, before.get(LOCAL));
			assertThat(enforcement(decision)).isIn(Enforcement.ENFORCED, Enforcement.LOCAL_FALLBACK);
			admitted += decision.allowed() ? 1 : 0;
			RateLimitDecision opened = check(0, OPEN, before.get(OPEN));
			assertThat(opened.allowed()).isTrue();
			assertThat(enforcement(opened)).isIn(Enforcement.ENFORCED, Enforcement.FAILED_OPEN);
			RateLimitDecision refused = check(0, CLOSED, before.get(CLOSED));
			assertThat(refused.allowed() ? enforcement(refused) == Enforcement.ENFORCED : refused.failedClosed())
				.isTrue();
		}
		assertThat(admitted).as("before the kill, from the slice and by the fallback, on one instance").isEqualTo(LIMIT);
		assertThat(check(0, CLOSED, before.get(CLOSED)).failedClosed()).as("the slice spent or given back").isTrue();
	}

	/** Requests from both instances in turn until both are denied: how many were admitted, every one by Redis. */
	private int drainTogether(RateLimitPolicy policy, String identity) {
		int admitted = drain(policy, identity);
		assertThat(admitted).as("every request of %s of %s decided by Redis", policy.name(), identity).isNotNegative();
		return admitted;
	}

	/**
	 * After the restart, fresh keys of the master drained until one drain was decided by Redis throughout: what it
	 * admitted. A half-open breaker may still refuse a request after one decided by Redis, which is its own doing
	 * (architecture.md, "After a master comes back"): a probe that timed out keeps its permitted call one budget
	 * more, and one that failed among two permitted opens the circuit again at this threshold. A drain that admits
	 * more than the limit still fails at once.
	 */
	private int drainOnceRedisDecides(RateLimitPolicy policy, HostAndPort master) {
		int[] admitted = { -1 };
		Wait.until(policy.name() + " drained on the restarted master, every request decided by Redis",
				Duration.ofSeconds(90), () -> {
					admitted[0] = drain(policy, identityOn(policy, master));
					return admitted[0] >= 0;
				});
		return admitted[0];
	}

	/**
	 * Requests from both instances in turn until both are denied: how many were admitted, or -1 once one was not
	 * decided by Redis.
	 */
	private int drain(RateLimitPolicy policy, String identity) {
		int admitted = 0;
		int deniedInARow = 0;
		for (int i = 0; deniedInARow < 2; i++) {
			assertThat(i).as("requests of %s", identity).isLessThan(10 * LIMIT);
			RateLimitDecision decision = check(i % 2, policy, identity);
			if (enforcement(decision) != Enforcement.ENFORCED) {
				return -1;
			}
			admitted += decision.allowed() ? 1 : 0;
			deniedInARow = decision.allowed() ? 0 : deniedInARow + 1;
		}
		return admitted;
	}

	private RateLimitDecision check(int instance, RateLimitPolicy policy, String identity) {
		return this.instances.get(instance).check(RateLimitRequest.of(policy, identity));
	}

	private static Enforcement enforcement(RateLimitDecision decision) {
		return decision.decisions().get(0).enforcement();
	}

	/** An identity never used before whose key, under the policy, is on the master. */
	private String identityOn(RateLimitPolicy policy, HostAndPort master) {
		return RefundTests.onMaster(this.cluster, new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX), policy, master,
				"id-" + this.fresh.incrementAndGet() + "-");
	}

	/**
	 * An instance: its own client and connection (like the starter's), the leasing backend, a breaker per master, a
	 * local fallback.
	 */
	private DefaultRateLimiter instance() {
		return instance(Duration.ofSeconds(10));
	}

	private DefaultRateLimiter instance(Duration openFor) {
		LettuceConnectionFactory factory = ClusterFactories.started(this.cluster, this.resources);
		RedisRateLimitBackend redis = new RedisRateLimitBackend(factory);
		redis.connect();
		LeasingBackend leasing = new LeasingBackend(redis, Map.of(OPEN.name(), LEASE, CLOSED.name(), LEASE,
				LOCAL.name(), LEASE, BUSY.name(), new LeaseSettings(1000, Duration.ofMinutes(1), Duration.ofMinutes(1))));
		leasing.start();
		this.resources.add(leasing);
		return DefaultRateLimiter.builder(leasing)
			.timeout(BUDGET)
			.circuitBreaker(CircuitBreaker.of("ratelimit-redis", CircuitBreakerConfig.custom()
				.slidingWindow(10, 5, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
				.failureRateThreshold(50)
				.waitDurationInOpenState(openFor)
				.permittedNumberOfCallsInHalfOpenState(2)
				.build()))
			.fallback(new LocalRateLimitBackend())
			.build();
	}

	/** A busy key's policy: a million a day, never exhausted by a test; refusing when Redis cannot decide. */
	static RateLimitPolicy busy(String name) {
		return RateLimitPolicy.builder(name)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(1_000_000)
			.window(Duration.ofDays(1))
			.failureMode(FailureMode.CLOSED)
			.build();
	}

	/** A day's window: nothing refills while a test runs. */
	static RateLimitPolicy policy(String name, FailureMode mode) {
		return RateLimitPolicy.builder(name)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(LIMIT)
			.window(Duration.ofDays(1))
			.failureMode(mode)
			.build();
	}

}
