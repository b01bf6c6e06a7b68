package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.HostAndPort;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Cluster master killed and restarted (three masters, no replicas, {@code cluster-require-full-coverage no}) under
 * a guarded limiter with a breaker per master: once its breaker lets a probe through and Redis decides it, the
 * requests that follow on fresh keys of that master are decided by Redis too, also when each is sent from the
 * previous decision's callback (before this was fixed, the breaker recorded an answer only after the decision had
 * gone on, so such a follower found the half-open breaker's permitted calls all taken and failed open). Requests many
 * in flight while the breaker is still half-open are another matter, inherent to a breaker: until its permitted calls
 * are recorded, the others are refused and follow their failure mode, which the test states (architecture.md, "After
 * a master comes back"). Every figure is a count.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RestartedMasterTests {

	/** Generous, so that no decision here depends on how fast a loaded machine answers. */
	private static final Duration BUDGET = Duration.ofSeconds(3);

	/** Calls let through while half-open, as in {@link LeasedClusterOutageTests}. */
	private static final int PERMITTED_IN_HALF_OPEN = 2;

	/** Requests sent one after the other, each from the previous decision's callback. */
	private static final int FOLLOWERS = 8;

	private static final int IN_FLIGHT = 50;

	private static final RateLimitPolicy OPEN = RateLimitPolicy.builder("restart-open")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(12)
		.window(Duration.ofDays(1))
		.failureMode(FailureMode.OPEN)
		.build();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final AtomicLong fresh = new AtomicLong();

	private RedisClusterServer cluster;

	@AfterEach
	void stop() throws Exception {
		ClusterFactories.closeBackwards(this.resources);
	}

	/** How the instance calls Redis: one script call per request, natural batching per master, or leased slices. */
	enum Path {

		PER_CALL, BATCHED, LEASED

	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void onceRedisDecidesAProbeOfTheRestartedMasterTheRequestsThatFollowAreDecidedByRedis(Path path) {
		this.cluster = RedisClusterServer.start(3, 0, false);
		this.resources.add(this.cluster);
		DefaultRateLimiter limiter = instance(path);
		HostAndPort master = this.cluster.masters().get(0);
		assertThat(enforcement(check(limiter, master))).isEqualTo(Enforcement.ENFORCED);
		CircuitBreaker breaker = breakerOf(limiter, master);
		this.cluster.killMaster(master);
		Wait.until("the killed master's circuit open", Duration.ofSeconds(90), () -> {
			assertThat(enforcement(check(limiter, master))).isEqualTo(Enforcement.FAILED_OPEN);
			return breaker.getState() == CircuitBreaker.State.OPEN;
		});
		this.cluster.restart(master);
		// half-open only now (its wait in open is long): the probes go to a master that is back
		List<RateLimitDecision> followed = new ArrayList<>();
		Wait.until("a probe of the restarted master decided by Redis", Duration.ofSeconds(90), () -> {
			halfOpen(breaker);
			followed.clear();
			followed.addAll(Objects.requireNonNull(probeAndFollowers(limiter, master).block()));
			return enforcement(followed.get(0)) == Enforcement.ENFORCED;
		});
		assertThat(followed).as("the probe and its followers").hasSize(FOLLOWERS + 1);
		assertThat(followed).extracting(RestartedMasterTests::described)
			.as("how the probe and its followers were decided")
			.containsOnly(Enforcement.ENFORCED.name());
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(inFlight(limiter, master)).extracting(RestartedMasterTests::enforcement)
			.as("many in flight once closed")
			.containsOnly(Enforcement.ENFORCED);
		halfOpen(breaker);
		List<RateLimitDecision> halfOpen = inFlight(limiter, master);
		// the breaker's own tail: only its permitted calls are sure to reach Redis, the rest may be refused
		String refused = Enforcement.FAILED_OPEN + " (" + CallNotPermittedException.class.getSimpleName() + ": ";
		assertThat(halfOpen).extracting(RestartedMasterTests::described)
			.as("many in flight while half-open: decided by Redis, or refused by the breaker")
			.allMatch((decided) -> decided.equals(Enforcement.ENFORCED.name()) || decided.startsWith(refused));
		assertThat(halfOpen.stream().filter((decision) -> enforcement(decision) == Enforcement.ENFORCED).count())
			.as("decided by Redis while half-open: at least its permitted calls")
			.isGreaterThanOrEqualTo(PERMITTED_IN_HALF_OPEN);
	}

	/** Open, then half-open: its permitted calls counted afresh, whatever an earlier attempt left. */
	private static void halfOpen(CircuitBreaker breaker) {
		if (breaker.getState() != CircuitBreaker.State.OPEN) {
			breaker.transitionToOpenState();
		}
		breaker.transitionToHalfOpenState();
	}

	/**
	 * A probe on a fresh key of the master; once Redis decided it, {@link #FOLLOWERS} more on fresh keys, each sent
	 * from the previous decision's callback (as a reactive caller does): the decisions in order.
	 */
	private Mono<List<RateLimitDecision>> probeAndFollowers(DefaultRateLimiter limiter, HostAndPort master) {
		RateLimitRequest probe = RateLimitRequest.of(OPEN, identityOn(master));
		return limiter.checkAsync(probe).flatMap((decision) -> {
			List<RateLimitDecision> decisions = new ArrayList<>(List.of(decision));
			if (enforcement(decision) != Enforcement.ENFORCED) {
				return Mono.just(decisions);
			}
			return Flux.range(0, FOLLOWERS)
				.concatMap((i) -> limiter.checkAsync(RateLimitRequest.of(OPEN, identityOn(master))))
				.doOnNext(decisions::add)
				.then(Mono.just(decisions));
		});
	}

	/** {@link #IN_FLIGHT} requests on fresh keys of the master, all sent before any is answered. */
	private List<RateLimitDecision> inFlight(DefaultRateLimiter limiter, HostAndPort master) {
		List<RateLimitRequest> requests = new ArrayList<>();
		for (int i = 0; i < IN_FLIGHT; i++) {
			requests.add(RateLimitRequest.of(OPEN, identityOn(master)));
		}
		return Flux.fromIterable(requests).flatMap(limiter::checkAsync, IN_FLIGHT).collectList().block();
	}

	/** How a decision was made, and why the backend did not decide it: {@code FAILED_OPEN (TimeoutException: ...)}. */
	private static String described(RateLimitDecision decision) {
		return enforcement(decision) + decision.failure()
			.map((failure) -> " (" + failure.getClass().getSimpleName() + ": " + failure.getMessage() + ")")
			.orElse("");
	}

	private RateLimitDecision check(DefaultRateLimiter limiter, HostAndPort master) {
		return limiter.check(RateLimitRequest.of(OPEN, identityOn(master)));
	}

	/** The breaker of the master's shard. */
	private CircuitBreaker breakerOf(DefaultRateLimiter limiter, HostAndPort master) {
		String shard = limiter.backend().shard(RateLimitRequest.of(OPEN, identityOn(master)).entries().get(0));
		return Objects.requireNonNull(limiter.circuitBreakers()).circuitBreaker("ratelimit-redis@" + shard);
	}

	private static Enforcement enforcement(RateLimitDecision decision) {
		return decision.decisions().get(0).enforcement();
	}

	/** An identity never used before whose key is on the master. */
	private String identityOn(HostAndPort master) {
		return RefundTests.onMaster(this.cluster, new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX), OPEN, master,
				"id-" + this.fresh.incrementAndGet() + "-");
	}

	/** An instance as the starter makes one: reconnects at most a second apart, a breaker per master. */
	private DefaultRateLimiter instance(Path path) {
		LettuceConnectionFactory factory = ClusterFactories.started(this.cluster, this.resources);
		RedisRateLimitBackend redis = RedisRateLimitBackend.builder(factory).batching(path != Path.PER_CALL).build();
		redis.connect();
		RateLimitBackend backend = redis;
		if (path == Path.LEASED) {
			LeasingBackend leasing = new LeasingBackend(redis,
					Map.of(OPEN.name(), new LeaseSettings(4, Duration.ofMinutes(1), Duration.ofMillis(100))));
			leasing.start();
			this.resources.add(leasing);
			backend = leasing;
		}
		return DefaultRateLimiter.builder(backend)
			.timeout(BUDGET)
			.circuitBreaker(CircuitBreaker.of("ratelimit-redis", CircuitBreakerConfig.custom()
				.slidingWindow(4, 2, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
				// opens when all fail: a probe that met the master still rejoining does not open it again
				.failureRateThreshold(100)
				.waitDurationInOpenState(Duration.ofHours(1))
				.permittedNumberOfCallsInHalfOpenState(PERMITTED_IN_HALF_OPEN)
				.build()))
			.fallback(new LocalRateLimitBackend())
			.build();
	}

}
