package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One master of a three-master Cluster without replicas killed, with {@code cluster-require-full-coverage no} (the
 * other masters go on serving their slots): the limiter's breaker per master keeps the dead master's failures to
 * its own keys. Its keys follow their failure mode at once, without trying it, and every key on the healthy masters
 * is still decided, and held to its limit, by Redis. A standalone Redis keeps the one breaker it was given.
 * <p>
 * The breakers stay open long (ten minutes) and the budget is generous (a second), so the outcomes counted here do
 * not depend on how fast a loaded machine runs.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClusterPartialOutageTests {

	private static final Duration BUDGET = Duration.ofSeconds(1);

	private static final String BREAKER = "ratelimit-redis";

	/** What every probed identity may take: five of the eight requests it makes. */
	private static final RateLimitPolicy PROBED = policy("probed", FailureMode.OPEN, 5);

	/**
	 * The load's policy: never denies (each load decision is a fresh identity's, and the limit is the largest a sliding
	 * window log takes), so that every load decision is one Redis (or a failure mode) made.
	 */
	private static final RateLimitPolicy LOAD = policy("load", FailureMode.OPEN, RateLimitPolicy.MAX_ENTRY_LIMIT);

	private static final RateLimitPolicy GLOBAL = policy("global", FailureMode.OPEN, 5);

	private static final RateLimitPolicy CLIENT = policy("client", FailureMode.OPEN, 2);

	private static final RateLimitPolicy CLIENT_CLOSED = policy("client-closed", FailureMode.CLOSED, 2);

	private final List<AutoCloseable> resources = new ArrayList<>();

	private RedisClusterServer cluster;

	private RedisRateLimitBackend backend;

	private DefaultRateLimiter limiter;

	@AfterEach
	void stop() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	@Test
	void aKilledMasterOpensItsOwnBreakerOnlyAndTheOtherMastersKeepEnforcingUnderLoad() throws Exception {
		startCluster();
		List<HostAndPort> masters = this.cluster.masters();
		HostAndPort victim = masters.get(0);
		assertThat(breakerNames()).as("one breaker per master, the configured one dropped")
			.containsExactlyInAnyOrderElementsOf(masters.stream().map(ClusterPartialOutageTests::breakerName).toList());
		try (Load load = new Load(this.limiter, 4)) {
			Wait.until(Duration.ofSeconds(30), () -> load.decisions() > 300);
			this.cluster.killMaster(victim);
			// the load's calls to the dead master fail (time out) until its breaker opens
			Wait.until("the killed master's breaker to open", Duration.ofSeconds(60),
					() -> breaker(victim).getState() == CircuitBreaker.State.OPEN);
			Probes probes = probe(masters, victim);
			System.out.printf("One of three masters killed, its breaker open: %d of %d identities on the two healthy "
					+ "masters held to their limit by Redis (5 of 8 admitted); %d of %d identities on the killed master "
					+ "decided by their failure mode (open) without trying it; load: %s%n", probes.healthyEnforced,
					probes.healthy, probes.deadByFailureMode, probes.dead, load);
			assertThat(probes.healthyEnforced).isEqualTo(probes.healthy).isPositive();
			assertThat(probes.deadByFailureMode).isEqualTo(probes.dead).isPositive();
			assertThat(probes.notDegradedSamples).as("degraded all along, not only after a failed call").isZero();
		}
		for (HostAndPort master : masters.subList(1, masters.size())) {
			assertThat(breaker(master).getState()).as("breaker of %s", master).isEqualTo(CircuitBreaker.State.CLOSED);
		}
		assertThat(this.limiter.recentFailureModeDecisions()).isPositive();
		assertThat(this.limiter.lastFailure()).isNotNull();
	}

	@Test
	void aRequestSpanningMastersIsDecidedPerMasterAndWhatOnePartTookIsGivenBackWhenAnotherDenies() {
		startCluster();
		List<HostAndPort> masters = this.cluster.masters();
		HostAndPort healthy = masters.get(0);
		HostAndPort victim = masters.get(1);
		for (GuardedRateLimiterTests.Path path : GuardedRateLimiterTests.Path.values()) {
			String all = onMaster(GLOBAL, healthy, "all-" + path + "-");
			String client = onMaster(CLIENT, victim, "client-" + path + "-");
			RateLimitRequest request = RateLimitRequest.builder().add(GLOBAL, all).add(CLIENT, client).build();
			assertThat(path.check(this.limiter, request).allowed()).isTrue();
			assertThat(path.check(this.limiter, request).allowed()).isTrue();
			RateLimitDecision denied = path.check(this.limiter, request);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.decisions().get(0).allowed()).isTrue();
			assertThat(denied.decisions().get(0).remaining()).as("reported as given back").isEqualTo(3);
			// the global part admitted on its master and is given back there
			Wait.until(Duration.ofSeconds(10), () -> remaining(GLOBAL, all) == 3);
		}
		this.cluster.killMaster(victim);
		openBreakerOf(victim);
		for (GuardedRateLimiterTests.Path path : GuardedRateLimiterTests.Path.values()) {
			String all = onMaster(GLOBAL, healthy, "outage-all-" + path + "-");
			String client = onMaster(CLIENT, victim, "outage-client-" + path + "-");
			int admitted = 0;
			for (int i = 0; i < 8; i++) {
				RateLimitDecision decision = path.check(this.limiter,
						RateLimitRequest.builder().add(GLOBAL, all).add(CLIENT, client).build());
				assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
				assertThat(decision.decisions().get(1).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
				assertThat(decision.failure()).containsInstanceOf(CallNotPermittedException.class);
				admitted += decision.allowed() ? 1 : 0;
			}
			assertThat(admitted).as("the global limit, counted by its healthy master").isEqualTo(5);
			String refusedAll = onMaster(GLOBAL, healthy, "refused-all-" + path + "-");
			String closedClient = onMaster(CLIENT_CLOSED, victim, "closed-client-" + path + "-");
			for (int i = 0; i < 8; i++) {
				RateLimitDecision refused = path.check(this.limiter,
						RateLimitRequest.builder().add(GLOBAL, refusedAll).add(CLIENT_CLOSED, closedClient).build());
				assertThat(refused.failedClosed()).isTrue();
				assertThat(refused.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
			}
			// every refused request's global part was given back: the global limit is whole
			Wait.until(Duration.ofSeconds(10), () -> remaining(GLOBAL, refusedAll) == 5);
		}
	}

	@Test
	void aStandaloneRedisKeepsTheOneBreakerItWasGiven() {
		RedisServer redis = RedisServers.standalone();
		LettuceConnectionFactory factory = started(new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port())));
		CircuitBreaker breaker = CircuitBreaker.of(BREAKER, breakerConfig());
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(new RedisRateLimitBackend(factory))
			.timeout(BUDGET)
			.circuitBreaker(breaker)
			.build();
		for (int i = 0; i < 20; i++) {
			RateLimitDecision decision = limiter
				.check(RateLimitRequest.builder().add(GLOBAL, "standalone").add(CLIENT, "standalone-" + i).build());
			assertThat(decision.degraded()).isFalse();
		}
		assertThat(limiter.circuitBreakers().getAllCircuitBreakers()).containsExactly(breaker);
		assertThat(limiter.circuitBreaker()).isSameAs(breaker);
		assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).as("a full window of ten").isEqualTo(10);
		assertThat(limiter.degraded()).isFalse();
	}

	private void startCluster() {
		this.cluster = RedisClusterServer.start(3, 0, false);
		this.resources.add(this.cluster);
		// like the starter's auto-configuration: reconnect attempts at most a second apart
		ClientResources clientResources = ClientResources.builder()
			.reconnectDelay(() -> Delay.exponential(Duration.ofMillis(1), Duration.ofSeconds(1), 2,
					TimeUnit.MILLISECONDS))
			.build();
		this.resources.add(() -> clientResources.shutdown(0, 1, TimeUnit.SECONDS));
		LettuceConnectionFactory factory = started(new LettuceConnectionFactory(
				new RedisClusterConfiguration(
						this.cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList()),
				LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofMinutes(1))
					.clientResources(clientResources)
					.build()));
		this.backend = new RedisRateLimitBackend(factory);
		this.backend.connect();
		this.limiter = DefaultRateLimiter.builder(this.backend)
			.timeout(BUDGET)
			.circuitBreaker(CircuitBreaker.of(BREAKER, breakerConfig()))
			.fallback(new LocalRateLimitBackend())
			.build();
		// a decision on every master makes its breaker
		for (HostAndPort master : this.cluster.masters()) {
			assertThat(this.limiter.check(RateLimitRequest.of(LOAD, onMaster(LOAD, master, "first-"))).degraded())
				.isFalse();
		}
	}

	private LettuceConnectionFactory started(LettuceConnectionFactory factory) {
		factory.afterPropertiesSet();
		factory.start();
		this.resources.add(factory::destroy);
		return factory;
	}

	/** Opens after five failed calls of ten; stays open for ten minutes, longer than any test here. */
	private static CircuitBreakerConfig breakerConfig() {
		return CircuitBreakerConfig.custom()
			.slidingWindow(10, 5, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.failureRateThreshold(50)
			.waitDurationInOpenState(Duration.ofMinutes(10))
			.permittedNumberOfCallsInHalfOpenState(2)
			.build();
	}

	private Set<String> breakerNames() {
		return this.limiter.circuitBreakers()
			.getAllCircuitBreakers()
			.stream()
			.map(CircuitBreaker::getName)
			.collect(Collectors.toSet());
	}

	private static String breakerName(HostAndPort master) {
		return BREAKER + "@" + master.host() + ":" + master.port();
	}

	private CircuitBreaker breaker(HostAndPort master) {
		return this.limiter.circuitBreakers().find(breakerName(master)).orElseThrow();
	}

	/** Decisions on the dead master's keys until its breaker opens (each waits for the budget until then). */
	private void openBreakerOf(HostAndPort master) {
		AtomicLong n = new AtomicLong();
		Wait.until("the breaker of " + master + " to open", Duration.ofSeconds(60), () -> {
			this.limiter.check(RateLimitRequest.of(LOAD, onMaster(LOAD, master, "open-" + n.incrementAndGet() + "-")));
			return breaker(master).getState() == CircuitBreaker.State.OPEN;
		});
	}

	private String onMaster(RateLimitPolicy policy, HostAndPort master, String prefix) {
		return RefundTests.onMaster(this.cluster, new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX), policy, master,
				prefix);
	}

	private long remaining(RateLimitPolicy policy, String identity) {
		return this.backend.inspect(RateLimitRequest.of(policy, identity)).get(0).remaining();
	}

	/**
	 * Twenty fresh identities per master, each making eight requests (half blocking, half not), on four threads:
	 * how many identities of the healthy masters Redis held to their limit, and how many of the dead master's
	 * followed their failure mode without trying it; meanwhile, whether the limiter says it is degraded.
	 */
	private Probes probe(List<HostAndPort> masters, HostAndPort dead) throws Exception {
		Map<String, HostAndPort> identities = new ConcurrentHashMap<>();
		for (HostAndPort master : masters) {
			for (int i = 0; i < 20; i++) {
				identities.put(onMaster(PROBED, master, "probe-" + i + "-"), master);
			}
		}
		ExecutorService threads = Executors.newFixedThreadPool(4);
		Probes probes = new Probes();
		try {
			List<Future<?>> done = new ArrayList<>();
			for (Map.Entry<String, HostAndPort> identity : identities.entrySet()) {
				done.add(threads.submit(() -> probes.add(identity.getValue().equals(dead), probe(identity.getKey()))));
			}
			for (Future<?> future : done) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		return probes;
	}

	private List<RateLimitDecision> probe(String identity) {
		List<RateLimitDecision> decisions = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			GuardedRateLimiterTests.Path path = GuardedRateLimiterTests.Path.values()[i % 2];
			decisions.add(path.check(this.limiter, RateLimitRequest.of(PROBED, identity)));
		}
		return decisions;
	}

	private final class Probes {

		int healthy;

		int healthyEnforced;

		int dead;

		int deadByFailureMode;

		int notDegradedSamples;

		synchronized void add(boolean onDeadMaster, List<RateLimitDecision> decisions) {
			notDegradedSamples += ClusterPartialOutageTests.this.limiter.degraded() ? 0 : 1;
			if (onDeadMaster) {
				this.dead++;
				boolean failedOpen = decisions.stream()
					.allMatch((decision) -> decision.allowed()
							&& decision.decisions().get(0).enforcement() == Enforcement.FAILED_OPEN
							&& decision.failure().orElse(null) instanceof CallNotPermittedException);
				this.deadByFailureMode += failedOpen ? 1 : 0;
			}
			else {
				this.healthy++;
				boolean enforced = decisions.stream()
					.allMatch((decision) -> decision.decisions().get(0).enforcement() == Enforcement.ENFORCED);
				long admitted = decisions.stream().filter(RateLimitDecision::allowed).count();
				this.healthyEnforced += (enforced && admitted == 5) ? 1 : 0;
			}
		}

	}

	/** Threads checking fresh identities in every slot, both paths, until closed. */
	private static final class Load implements AutoCloseable {

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final Map<Enforcement, AtomicLong> byEnforcement = new ConcurrentHashMap<>();

		private final List<Thread> threads = new ArrayList<>();

		Load(RateLimiter limiter, int threadCount) {
			for (int t = 0; t < threadCount; t++) {
				int thread = t;
				Thread worker = new Thread(() -> {
					for (long i = 0; this.running.get(); i++) {
						GuardedRateLimiterTests.Path path = GuardedRateLimiterTests.Path.values()[(int) (i % 2)];
						RateLimitDecision decision = path.check(limiter,
								RateLimitRequest.of(LOAD, "load-" + thread + "-" + i));
						this.byEnforcement.computeIfAbsent(decision.decisions().get(0).enforcement(),
								(kind) -> new AtomicLong()).incrementAndGet();
					}
				}, "load-" + t);
				worker.start();
				this.threads.add(worker);
			}
		}

		long decisions() {
			return this.byEnforcement.values().stream().mapToLong(AtomicLong::get).sum();
		}

		@Override
		public void close() throws InterruptedException {
			this.running.set(false);
			for (Thread thread : this.threads) {
				thread.join(TimeUnit.MINUTES.toMillis(1));
			}
		}

		@Override
		public String toString() {
			return this.byEnforcement.entrySet()
				.stream()
				.map((entry) -> entry.getValue() + " " + entry.getKey())
				.collect(Collectors.joining(", "));
		}

	}

	private static RateLimitPolicy policy(String name, FailureMode mode, long limit) {
		return RateLimitPolicy.builder(name)
			// a sliding window log: a fixed window's boundary (each whole hour) amid counted requests would refill it
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(limit)
			.window(Duration.ofHours(1))
			.failureMode(mode)
			.build();
	}

}
