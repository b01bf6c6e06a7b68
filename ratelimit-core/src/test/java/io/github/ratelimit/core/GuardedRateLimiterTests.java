package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.Range;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The guarded limiter against real failures of a real Redis: the server killed, frozen ({@code SIGSTOP}), restarted
 * without its scripts, turned into a read-only replica, and cut off or slowed down by a loopback proxy. No failure
 * reaches the caller: each policy's failure mode decides, the circuit breaker stops trying, and enforcement resumes
 * once Redis answers. The client's own command timeout is left at a minute, so every bounded call shows the
 * limiter's budget at work, not the client's.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuardedRateLimiterTests {

	private static final Duration BUDGET = Duration.ofMillis(100);

	private static final RateLimitPolicy OPEN = policy("open", Algorithm.GCRA, FailureMode.OPEN, 3);

	private static final RateLimitPolicy CLOSED = policy("closed", Algorithm.FIXED_WINDOW, FailureMode.CLOSED, 3);

	private static final RateLimitPolicy LOCAL = policy("local", Algorithm.TOKEN_BUCKET, FailureMode.LOCAL, 3);

	private static final RateLimitPolicy PERMITS = RateLimitPolicy.builder("permits")
		.algorithm(Algorithm.CONCURRENCY)
		.limit(2)
		.window(Duration.ofMinutes(5))
		.failureMode(FailureMode.OPEN)
		.build();

	private RedisServer redis;

	private TcpProxy proxy;

	private ClientResources resources;

	private LettuceConnectionFactory factory;

	private CircuitBreaker breaker;

	private DefaultRateLimiter limiter;

	enum Path {

		BLOCKING, NON_BLOCKING;

		RateLimitDecision check(RateLimiter limiter, RateLimitRequest request) {
			return (this == BLOCKING) ? limiter.check(request) : limiter.checkAsync(request).block();
		}

	}

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.proxy = TcpProxy.start(this.redis.address());
		// like the starter's auto-configuration: reconnect attempts at most a second apart
		this.resources = ClientResources.builder()
			.reconnectDelay(() -> Delay.exponential(Duration.ofMillis(1), Duration.ofSeconds(1), 2,
					TimeUnit.MILLISECONDS))
			.build();
		this.factory = factory(this.proxy.port());
		this.breaker = breaker();
		this.limiter = guarded(this.factory, this.breaker);
	}

	/** A client as Spring Boot configures it by default: a command timeout of a minute. */
	private LettuceConnectionFactory factory(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port), LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofMinutes(1))
					.clientResources(this.resources)
					.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static CircuitBreaker breaker() {
		return CircuitBreaker.of("test", CircuitBreakerConfig.custom()
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(10)
			.minimumNumberOfCalls(5)
			.failureRateThreshold(50)
			.waitDurationInOpenState(Duration.ofMillis(500))
			.permittedNumberOfCallsInHalfOpenState(2)
			.build());
	}

	private static DefaultRateLimiter guarded(LettuceConnectionFactory factory, CircuitBreaker breaker) {
		return DefaultRateLimiter.builder(new RedisRateLimitBackend(factory))
			.timeout(BUDGET)
			.circuitBreaker(breaker)
			.fallback(new LocalRateLimitBackend())
			.build();
	}

	@AfterEach
	void stop() {
		this.factory.destroy();
		this.resources.shutdown(0, 1, TimeUnit.SECONDS);
		this.proxy.close();
		this.redis.close();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void killedRedisIsDecidedByEachPolicysFailureModeAndEnforcementResumesAfterRestart(Path path) {
		assertEnforced(path);
		this.redis.kill();
		List<RateLimitDecision> outage = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			outage.add(path.check(this.limiter, request("client-" + i)));
		}
		for (RateLimitDecision decision : outage) {
			assertThat(decision.degraded()).isTrue();
			assertThat(decision.failure()).isPresent();
			assertThat(byPolicy(decision, "open").enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
			assertThat(byPolicy(decision, "open").allowed()).isTrue();
			assertThat(byPolicy(decision, "closed").enforcement()).isEqualTo(Enforcement.FAILED_CLOSED);
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.failedClosed()).isTrue();
			assertThat(byPolicy(decision, "local").enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		}
		// the breaker opened: later decisions do not even try Redis
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(outage.get(outage.size() - 1).failure()).containsInstanceOf(CallNotPermittedException.class);
		this.redis.restart();
		awaitEnforced(path);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void localFailureModeAdmitsExactlyTheLimitInMemoryWhileRedisIsDown(Path path) {
		this.redis.kill();
		List<RateLimitDecision> decisions = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			decisions.add(path.check(this.limiter, RateLimitRequest.of(LOCAL, "alice")));
		}
		assertThat(decisions).allSatisfy((decision) -> assertThat(decision.decisions().get(0).enforcement())
			.isEqualTo(Enforcement.LOCAL_FALLBACK));
		assertThat(decisions.stream().filter(RateLimitDecision::allowed)).hasSize(3);
		assertThat(decisions.get(3).failedClosed()).isFalse();
		assertThat(decisions.get(3).retryAfter()).isPositive();
		assertThat(decisions.get(2).decisions().get(0).remaining()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void frozenRedisTimesOutWithinTheBudgetAndLatePermitsGoBackWithTheirRequests(Path path) {
		assertEnforced(path);
		List<RateLimitDecision> decisions = new ArrayList<>();
		this.redis.freeze();
		try {
			for (int i = 0; i < 3; i++) {
				RateLimitDecision decision = path.check(this.limiter, RateLimitRequest.of(PERMITS, "frozen"));
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
				assertThat(decision.failure()).containsInstanceOf(TimeoutException.class);
				// the request may come to hold a permit of Redis' once it answers: it must be released at its end
				assertThat(decision.permit().holdsAny()).isTrue();
				decisions.add(decision);
			}
			// this request ends before Redis answers: its permit goes back as soon as it is taken
			decisions.get(0).permit().release();
		}
		finally {
			this.redis.thaw();
		}
		// the three acquisitions Redis runs once thawed (its sequence, the member '#', says two admitted, numbered 1
		// and 2) belong to requests that were served: the permits they took are held until those requests end
		String key = new RedisRateLimitBackend(this.factory).key(PERMITS, "frozen");
		Wait.until(Duration.ofSeconds(10), () -> Double.valueOf(-2).equals(this.redis.commands().zscore(key, "#"))
				&& held(key) == 1);
		decisions.get(1).permit().release();
		decisions.get(2).permit().release();
		assertThat(decisions).allSatisfy((decision) -> assertThat(decision.permit().holdsAny()).isFalse());
		Wait.until(Duration.ofSeconds(10), () -> held(key) == 0);
		awaitEnforced(path);
		RateLimitDecision first = path.check(this.limiter, RateLimitRequest.of(PERMITS, "frozen"));
		RateLimitDecision second = path.check(this.limiter, RateLimitRequest.of(PERMITS, "frozen"));
		RateLimitDecision third = path.check(this.limiter, RateLimitRequest.of(PERMITS, "frozen"));
		assertThat(List.of(first.allowed(), second.allowed(), third.allowed())).containsExactly(true, true, false);
		assertThat(third.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void slowRedisBeyondTheBudgetIsAFailureAndFastAgainIsEnforced(Path path) {
		assertEnforced(path);
		this.proxy.latency(BUDGET.multipliedBy(3));
		for (int i = 0; i < 6; i++) {
			RateLimitDecision decision = path.check(this.limiter, request("slow-" + i));
			assertThat(decision.degraded()).isTrue();
		}
		this.proxy.latency(Duration.ZERO);
		awaitEnforced(path);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void answersJustPastTheBudgetAreDecidedByTheFailureModesWithoutOpeningTheBreaker(Path path) {
		assertEnforced(path);
		// 65 ms each way: answers come about 130 ms after the call, past the 100 ms budget but within one more
		// budget, as when this client (not Redis) was late; the breaker judges Redis, so it stays closed
		this.proxy.latency(Duration.ofMillis(65));
		int degraded = 0;
		for (int i = 0; i < 12; i++) {
			degraded += path.check(this.limiter, request("late-" + i)).degraded() ? 1 : 0;
		}
		assertThat(degraded).isGreaterThan(6);
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		this.proxy.latency(Duration.ZERO);
		awaitEnforced(path);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void blackholedAndResetConnectionsAreFailuresUntilTheProxyForwardsAgain(Path path) {
		assertEnforced(path);
		this.proxy.blackhole();
		RateLimitDecision blackholed = path.check(this.limiter, request("blackhole"));
		assertThat(blackholed.failure()).containsInstanceOf(TimeoutException.class);
		this.proxy.resetAll();
		this.proxy.refuse();
		for (int i = 0; i < 6; i++) {
			assertThat(path.check(this.limiter, request("refused-" + i)).degraded()).isTrue();
		}
		this.proxy.restore();
		awaitEnforced(path);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void scriptsFlushedByARestartAreLoadedAgain(Path path) {
		assertEnforced(path);
		this.redis.commands().scriptFlush();
		RateLimitDecision decision = path.check(this.limiter, request("after-flush"));
		assertThat(decision.degraded()).isFalse();
		assertThat(decision.allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void aConnectionFactoryStoppedAndStartedAgainIsUsedAgain(Path path) {
		assertEnforced(path);
		// what Spring does to the factory when it stops and restarts (or pauses and resumes) the context
		this.factory.stop();
		this.factory.start();
		awaitEnforced(path);
	}

	@Test
	void aReadOnlyReplicaIsAFailureAndAWritableMasterIsEnforcedAgain() {
		assertEnforced(Path.BLOCKING);
		try (RedisServer master = RedisServer.start()) {
			this.redis.commands().replicaof(master.host(), master.port());
			Wait.until(Duration.ofSeconds(10),
					() -> this.redis.commands().info("replication").contains("master_link_status:up"));
			// on a loaded machine a check may spend its budget first (degraded by the timeout): the replica's own
			// refusal is what is asked for, so the checks go on until one carries it
			Wait.until(Duration.ofSeconds(10), () -> {
				RateLimitDecision decision = this.limiter.check(request("read-only"));
				assertThat(decision.degraded()).isTrue();
				return decision.failure().map(GuardedRateLimiterTests::readOnly).orElse(false);
			});
			this.redis.commands().replicaofNoOne();
		}
		awaitEnforced(Path.BLOCKING);
	}

	@Test
	void aServerLoadingItsDatasetAfterARestartIsDecidedByTheFailureModesUntilItHasLoaded() {
		// 12,000 keys of 1 KB loaded at 200 microseconds each: Redis answers LOADING for a few seconds after a
		// restart (it serves clients only between every 2 MB it reads: the values are large and do not compress)
		try (RedisServer loading = RedisServer.start(List.of("--key-load-delay", "200"))) {
			loading.commands()
				.eval("for i = 1, 12000 do local v = '' for j = 1, 25 do v = v .. redis.sha1hex(i .. ':' .. j) end "
						+ "redis.call('SET', 'filler:' .. i, v) end return 1", io.lettuce.core.ScriptOutputType.INTEGER);
			loading.commands().save();
			LettuceConnectionFactory factory = factory(loading.port());
			try {
				DefaultRateLimiter limiter = guarded(factory, breaker());
				this.limiter = limiter;
				awaitEnforced(Path.BLOCKING);
				loading.kill();
				// the restart returns once the new process answers INFO, which may be only when it has loaded: the
				// limiter is asked while it restarts
				java.util.concurrent.CompletableFuture<Void> restarted = java.util.concurrent.CompletableFuture
					.runAsync(loading::restart);
				// while the server says it is loading (Lettuce's reconnect handshake gets LOADING, commands wait for it),
				// the failure modes decide
				Wait.until(Duration.ofSeconds(20),
						() -> isLoading(loading.port()) && limiter.check(request("loading-" + System.nanoTime()))
							.degraded());
				restarted.join();
				awaitEnforced(Path.BLOCKING);
				assertThat(loading.commands().dbsize()).isGreaterThanOrEqualTo(12_000);
			}
			finally {
				factory.destroy();
			}
		}
	}

	/** Whether the server is loading its dataset, asked over a plain socket ({@code INFO} is served while loading). */
	private static boolean isLoading(int port) {
		try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("INFO persistence\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
			byte[] buffer = new byte[4096];
			int read = socket.getInputStream().read(buffer);
			return read > 0 && new String(buffer, 0, read, java.nio.charset.StandardCharsets.US_ASCII)
				.contains("loading:1");
		}
		catch (java.io.IOException ex) {
			return false;
		}
	}

	@Test
	void permitsTakenBeforeAnOutageAreReleasedWithoutWaitingForRedis() {
		assertEnforced(Path.BLOCKING);
		RateLimitDecision held = this.limiter.check(RateLimitRequest.of(PERMITS, "holder"));
		assertThat(held.allowed()).isTrue();
		assertThat(held.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		this.redis.freeze();
		try {
			// bounded by the budget: a frozen Redis never holds the completing request's thread
			held.permit().release();
			assertThat(held.permit().holdsAny()).isFalse();
		}
		finally {
			this.redis.thaw();
		}
		// the release was sent and lands once Redis runs again
		String key = new RedisRateLimitBackend(this.factory).key(PERMITS, "holder");
		Wait.until(Duration.ofSeconds(10), () -> held(key) == 0);
	}

	/** The permits a concurrency key holds: members scored with a time, not the sequence's {@code #} (below 0). */
	private long held(String key) {
		return this.redis.commands().zcount(key, Range.from(Range.Boundary.including(0), Range.Boundary.unbounded()));
	}

	/**
	 * An unguarded permit whose release timed out can be released again; the first attempt, already sent, runs when
	 * Redis does, and the retry gives nothing more and never another request's permit.
	 */
	@Test
	void aPermitReleaseRetriedAfterATimeoutGivesBackItsOwnPermitOnce() {
		LettuceConnectionFactory impatient = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.proxy.port()), LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofMillis(300))
					.clientResources(this.resources)
					.build());
		impatient.afterPropertiesSet();
		impatient.start();
		try {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(impatient);
			DefaultRateLimiter unguarded = new DefaultRateLimiter(backend);
			RateLimitRequest request = RateLimitRequest.of(PERMITS, "retried");
			RateLimitDecision first = unguarded.check(request);
			RateLimitDecision second = unguarded.check(request);
			assertThat(List.of(first.allowed(), second.allowed())).containsOnly(true);
			this.redis.freeze();
			try {
				assertThatThrownBy(first.permit()::release).isInstanceOf(RuntimeException.class);
				assertThat(first.permit().holdsAny()).as("a failed release can be tried again").isTrue();
			}
			finally {
				this.redis.thaw();
			}
			first.permit().release();
			assertThat(first.permit().holdsAny()).isFalse();
			assertThat(held(backend.key(PERMITS, "retried"))).as("the second request's permit stays").isEqualTo(1);
			assertThat(unguarded.check(request).allowed()).isTrue();
			assertThat(unguarded.check(request).allowed()).isFalse();
		}
		finally {
			impatient.destroy();
		}
	}

	@Test
	void permitsTakenFromTheLocalFallbackAreReleasedLocally() {
		RateLimitPolicy localPermits = PERMITS.toBuilder().failureMode(FailureMode.LOCAL).build();
		this.redis.kill();
		RateLimitDecision first = this.limiter.check(RateLimitRequest.of(localPermits, "local"));
		RateLimitDecision second = this.limiter.check(RateLimitRequest.of(localPermits, "local"));
		assertThat(this.limiter.check(RateLimitRequest.of(localPermits, "local")).allowed()).isFalse();
		first.permit().release();
		RateLimitDecision third = this.limiter.check(RateLimitRequest.of(localPermits, "local"));
		assertThat(third.allowed()).isTrue();
		assertThat(third.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		second.permit().release();
		third.permit().release();
	}

	@Test
	void aClosedPolicyRefusingGivesBackWhatTheLocalPoliciesTook() {
		this.redis.kill();
		for (int i = 0; i < 10; i++) {
			RateLimitDecision decision = this.limiter
				.check(RateLimitRequest.builder().add(LOCAL, "bob").add(CLOSED, "bob").build());
			assertThat(decision.failedClosed()).isTrue();
		}
		// nothing was taken locally: the local policy alone still admits its whole limit
		for (int i = 0; i < 3; i++) {
			assertThat(this.limiter.check(RateLimitRequest.of(LOCAL, "bob")).allowed()).isTrue();
		}
		assertThat(this.limiter.check(RateLimitRequest.of(LOCAL, "bob")).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void aShadowPolicyThatFailsClosedNeverRefusesAndALocalOneCountsInMemoryWhileRedisIsDown(Path path) {
		RateLimitPolicy closedShadow = CLOSED.toBuilder().shadow(true).build();
		// a sliding window log: a fixed window's boundary (each whole minute) between the checks would refill it
		RateLimitPolicy localShadow = policy("local-shadow", Algorithm.SLIDING_WINDOW_LOG, FailureMode.LOCAL, 1)
			.toBuilder()
			.shadow(true)
			.build();
		this.redis.kill();
		for (int i = 0; i < 3; i++) {
			RateLimitDecision closed = path.check(this.limiter,
					RateLimitRequest.builder().add(OPEN, "eve").add(closedShadow, "eve").build());
			assertThat(closed.allowed()).isTrue();
			assertThat(closed.failedClosed()).isFalse();
			assertThat(closed.decisions()).singleElement()
				.extracting(PolicyDecision::enforcement)
				.isEqualTo(Enforcement.FAILED_OPEN);
			assertThat(closed.shadowDecisions()).singleElement()
				.extracting(PolicyDecision::enforcement)
				.isEqualTo(Enforcement.FAILED_CLOSED);
			// Redis, not the client, made it refuse: counted as failed_closed, not as a shadow denial
			assertThat(DefaultRateLimitObservationConvention.outcome(closed.shadowDecisions().get(0)))
				.isEqualTo(DefaultRateLimitObservationConvention.FAILED_CLOSED);
			assertThat(closed.shadowDenied()).isFalse();
			RateLimitDecision local = path.check(this.limiter,
					RateLimitRequest.builder().add(OPEN, "eve").add(localShadow, "eve").build());
			assertThat(local.allowed()).isTrue();
			// the fallback counts the shadow policy as usual: one admitted, then it would have denied
			assertThat(local.shadowDecisions()).singleElement()
				.extracting(PolicyDecision::enforcement)
				.isEqualTo(Enforcement.LOCAL_FALLBACK);
			assertThat(local.shadowDecisions().get(0).allowed()).isEqualTo(i == 0);
		}
	}

	/**
	 * Redis decides. The first call of a new client also opens its connection, which a cold JVM may not do within
	 * the budget: the starter opens it at startup; here the check waits until Redis decides.
	 */
	private void assertEnforced(Path path) {
		awaitEnforced(path);
	}

	/**
	 * Polls until Redis decides again and keeps deciding: five decisions in a row made by Redis. (The breaker may
	 * still open once after Redis is back, from failures in its window; it lets probes through after its wait.)
	 */
	private void awaitEnforced(Path path) {
		int[] inARow = { 0 };
		Wait.until(Duration.ofSeconds(30), () -> {
			RateLimitDecision decision = path.check(this.limiter, request("probe-" + System.nanoTime()));
			inARow[0] = decision.degraded() ? 0 : inARow[0] + 1;
			if (!decision.degraded()) {
				assertThat(decision.allowed()).isTrue();
			}
			return inARow[0] >= 5;
		});
	}

	private static RateLimitRequest request(String identity) {
		return RateLimitRequest.builder().add(OPEN, identity).add(CLOSED, identity).add(LOCAL, identity).build();
	}

	private static PolicyDecision byPolicy(RateLimitDecision decision, String name) {
		return decision.decisions().stream().filter((d) -> d.policy().name().equals(name)).findFirst().orElseThrow();
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, FailureMode mode, long limit) {
		return RateLimitPolicy.builder(name)
			.algorithm(algorithm)
			.limit(limit)
			.window(Duration.ofMinutes(1))
			.failureMode(mode)
			.build();
	}

	/** Whether a failure is the replica's READONLY refusal, wherever it sits in the chain of causes. */
	private static boolean readOnly(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (String.valueOf(cause.getMessage()).contains("READONLY")) {
				return true;
			}
		}
		return false;
	}

}
