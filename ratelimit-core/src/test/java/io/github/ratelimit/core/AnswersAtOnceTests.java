package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.Wait;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decisions made at once ({@link RateLimiter#checkAtOnce}) on a real Redis: a leased slice's spend is decided on the
 * calling thread, anything that needs Redis is not (and takes nothing), the limit holds whichever way a request
 * goes; while the circuit is open nothing is decided at once (the failure mode decides, no take reaches Redis), and
 * once Redis is back leased requests alone close the circuit and bring the limiter's health back.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AnswersAtOnceTests {

	private static final int LIMIT = LeasedClusterOutageTests.LIMIT;

	/** Slices of four at most, that neither lapse nor go idle while a test runs. */
	private static final LeaseSettings LEASE = new LeaseSettings(4, Duration.ofMinutes(1), Duration.ofMinutes(1));

	private static final RateLimitPolicy LEASED = LeasedClusterOutageTests.policy("leased", FailureMode.CLOSED);

	/** A busy key's policy: slices of a thousand, never exhausted by a test. */
	private static final RateLimitPolicy BUSY = LeasedClusterOutageTests.busy("busy");

	/** A second such policy, for requests of two leased entries (never decided at once). */
	private static final RateLimitPolicy BUSY_TOO = LeasedClusterOutageTests.busy("busy-too");

	private static final RateLimitPolicy EXACT = LeasedClusterOutageTests.policy("exact", FailureMode.CLOSED);

	private final List<AutoCloseable> resources = new ArrayList<>();

	private RedisServer redis;

	private CircuitBreaker breaker;

	private CountingBackend counting;

	private final TestObservationRegistry observations = TestObservationRegistry.create();

	@AfterEach
	void stop() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	@Test
	void onlyALeasedSpendTheSliceHoldsIsDecidedAtOnceAndTheLimitHoldsEitherWay() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(LEASED, "alice");
		assertThat(limiter.checkAtOnce(leased)).as("no slice yet: only Redis can answer").isNull();
		assertThat(this.redis.commands().keys("*")).as("and nothing was taken").isEmpty();
		assertThat(limiter.check(leased).allowed()).isTrue(); // takes a slice of four, spends one
		for (int i = 0; i < 3; i++) {
			RateLimitDecision now = limiter.checkAtOnce(leased);
			assertThat(now).as("spend %d of the slice", i).isNotNull();
			assertThat(now.allowed()).isTrue();
			assertThat(now.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		}
		// not at once: another policy, an explicit time, two entries, and a leased key whose slice is spent
		assertThat(limiter.checkAtOnce(RateLimitRequest.of(EXACT, "alice"))).isNull();
		assertThat(limiter.checkAtOnce(RateLimitRequest.builder()
			.add(LEASED, "alice", 1)
			.at(TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()))
			.build())).isNull();
		assertThat(limiter.checkAtOnce(RateLimitRequest.builder()
			.add(LEASED, "alice", 1)
			.add(EXACT, "alice", 1)
			.build())).isNull();
		assertThat(this.redis.commands().keys("*")).as("the leased key alone: none of those took anything")
			.hasSize(1);
		// at once where the slice holds, else through Redis: the limit, never more
		int admitted = 4;
		int atOnce = 3;
		for (int i = 0; i < 3 * LIMIT; i++) {
			RateLimitDecision now = limiter.checkAtOnce(leased);
			atOnce += (now != null) ? 1 : 0;
			RateLimitDecision decision = (now != null) ? now : limiter.check(leased);
			admitted += decision.allowed() ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(LIMIT);
		assertThat(atOnce).as("the slices' spends after each take").isGreaterThanOrEqualTo(LIMIT / 2);
	}

	@Test
	void aReactiveCallerGetsTheSlicesSpendWhenItAsksWithoutTheLayersCall() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(LEASED, "alice");
		Mono<RateLimitDecision> check = limiter.checkAsync(leased);
		assertThat(this.counting.acquisitions() + this.counting.atOnce()).as("nothing before a subscription").isZero();
		assertThat(check.block().allowed()).isTrue(); // no slice yet: the layers' call takes a slice of four
		assertThat(this.counting.acquisitions()).isOne();
		for (int i = 0; i < 3; i++) {
			RateLimitDecision spend = check.block(); // each subscription decides again, when it asks
			assertThat(spend.allowed()).isTrue();
			assertThat(spend.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		}
		assertThat(this.counting.atOnce()).as("the slice's three spends, made when asked").isEqualTo(3);
		assertThat(this.counting.acquisitions()).as("none through the layers' Mono").isOne();
		int admitted = 4;
		for (int i = 0; i < 3 * LIMIT; i++) {
			admitted += check.block().allowed() ? 1 : 0;
		}
		assertThat(admitted).as("at once or through Redis: the limit, never more").isEqualTo(LIMIT);
	}

	@Test
	void aReactiveCallersDecisionMadeAtOnceIsObservedUnderReactorsContextsObservation() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(BUSY, "alice");
		assertThat(limiter.check(leased).allowed()).isTrue(); // takes a slice: the next one is a spend
		Observation server = Observation.start("http.server.requests", this.observations);
		Context context = Context.of("micrometer.observation", server); // as WebFlux and the gateway pass it on
		limiter.checkAsync(RateLimitRequest.of(EXACT, "alice")).contextWrite(context).block(); // the layers' Mono
		limiter.checkAsync(leased).contextWrite(context).block();
		assertThat(limiter.checkAtOnce(leased, context)).as("a reactive caller asking itself").isNotNull();
		server.stop();
		assertThat(this.counting.atOnce()).isEqualTo(2);
		TestObservationRegistryAssert.assertThat(this.observations).hasHandledContextsThatSatisfy((contexts) -> {
			List<Observation.Context> decisions = contexts.stream()
				.filter((handled) -> "ratelimit.decision".equals(handled.getName()))
				.toList();
			assertThat(decisions).hasSize(4);
			assertThat(decisions.get(1).getParentObservation()).as("through the layers").isSameAs(server);
			assertThat(decisions.get(2).getParentObservation()).as("made at once").isSameAs(server);
			assertThat(decisions.get(3).getParentObservation()).as("asked at once with the context")
				.isSameAs(server);
		});
	}

	@Test
	void aReactiveCallerThatCancelsBeforeAskingTakesNothing() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(BUSY, "alice");
		limiter.check(leased);
		long before = limiter.check(leased).decisions().get(0).remaining();
		limiter.checkAsync(leased).subscribe(new BaseSubscriber<RateLimitDecision>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				cancel(); // never requested: no decision is seen, none may be spent
			}

		});
		assertThat(limiter.check(leased).decisions().get(0).remaining()).isEqualTo(before - 1);
	}

	@Test
	void aBackendWhoseAnswerAtOnceThrowsIsCountedAsFailedAndTheGuardedCallDecides() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(BUSY, "alice");
		assertThat(limiter.check(leased).allowed()).isTrue(); // a slice: the next one would be a spend
		this.counting.failAtOnceWith(new IllegalStateException("a broken acquireAtOnce"));
		assertThat(limiter.checkAtOnce(leased)).isNull();
		RateLimitDecision reactive = limiter.checkAsync(leased).block();
		RateLimitDecision blocking = limiter.check(leased);
		for (RateLimitDecision decision : List.of(reactive, blocking)) {
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.decisions().get(0).enforcement()).as("decided by the slice through the layers")
				.isEqualTo(Enforcement.ENFORCED);
		}
		// three throws: checkAtOnce, checkAsync, and check (at once, then not asked at once again)
		assertThat(limiter.errorCount(BackendErrorKind.BACKEND_ERROR)).as("each throw counted once").isEqualTo(3);
	}

	@Test
	void aDecisionMadeAtOnceIsObserved() {
		DefaultRateLimiter limiter = limiter();
		RateLimitRequest leased = RateLimitRequest.of(LEASED, "alice");
		limiter.check(leased);
		RateLimitDecision now = limiter.checkAtOnce(leased);
		assertThat(now).isNotNull();
		TestObservationRegistryAssert.assertThat(this.observations)
			.hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 2)
			.hasHandledContextsThatSatisfy((contexts) -> assertThat(contexts)
				.allSatisfy((context) -> assertThat(context.getLowCardinalityKeyValue("outcome").getValue())
					.isEqualTo("allowed")));
	}

	@Test
	void whileTheCircuitIsOpenNothingIsDecidedAtOnceAndNoTakeReachesRedis() {
		DefaultRateLimiter limiter = limiter(Duration.ofMinutes(5));
		RateLimitRequest leased = RateLimitRequest.of(LEASED, "alice");
		assertThat(limiter.check(leased).allowed()).isTrue(); // a slice of four, one spent
		this.redis.kill();
		openTheCircuit(limiter);
		this.redis.restart(); // empty, and the circuit stays open for minutes
		for (int i = 0; i < 6; i++) {
			assertThat(limiter.checkAtOnce(leased)).as("at once while the circuit is open").isNull();
			assertThat(limiter.check(leased).failedClosed()).as("the policy's failure mode decides").isTrue();
		}
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.redis.commands().keys("*")).as("no take sent past the open circuit").isEmpty();
	}

	@Test
	void onceRedisIsBackTheCircuitClosesAndTheLimiterIsHealthyAgainOnLeasedRequestsAlone() {
		DefaultRateLimiter limiter = limiter(Duration.ofSeconds(1));
		RateLimitRequest leased = sliceTakenThenCircuitOpened(limiter);
		assertThat(limiter.degraded()).isTrue();
		this.redis.restart();
		// probing: leased requests go through the breaker's permitted calls, which close it
		Wait.until("the circuit closed by leased requests", Duration.ofSeconds(90), () -> {
			limiter.check(leased);
			return this.breaker.getState() == CircuitBreaker.State.CLOSED;
		});
		int atOnce = 0;
		for (int i = 0; i < 100; i++) {
			RateLimitDecision now = limiter.checkAtOnce(leased);
			atOnce += (now != null) ? 1 : 0;
			RateLimitDecision decision = (now != null) ? now : limiter.check(leased);
			assertThat(decision.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		}
		assertThat(atOnce).as("decided at once again").isPositive();
		// the failure-mode decisions of the outage age out of the recent ones on leased requests alone
		for (int i = 0; i < Guard.RecentDecisions.SIZE; i++) {
			RateLimitDecision now = limiter.checkAtOnce(leased);
			assertThat((now != null) ? now : limiter.check(leased)).matches(RateLimitDecision::allowed);
		}
		assertThat(limiter.degraded()).isFalse();
	}

	@Test
	void whileRedisIsStillDownLeasedRequestsAnsweredFromTheSliceDoNotCloseAProbingCircuit() {
		DefaultRateLimiter limiter = limiter(Duration.ofMillis(500));
		RateLimitRequest leased = sliceTakenThenCircuitOpened(limiter);
		List<CircuitBreaker.StateTransition> transitions = new CopyOnWriteArrayList<>();
		this.breaker.getEventPublisher().onStateTransition((event) -> transitions.add(event.getStateTransition()));
		// several open waits: each time the breaker probes, a leased request's permitted call is answered from the
		// slice, and the breaker hears of a probe of Redis instead, which fails
		long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		while (System.nanoTime() < until) {
			limiter.check(leased);
		}
		Wait.until("the breaker's probes heard", Duration.ofSeconds(10),
				() -> transitions.contains(CircuitBreaker.StateTransition.HALF_OPEN_TO_OPEN));
		assertThat(transitions).doesNotContain(CircuitBreaker.StateTransition.HALF_OPEN_TO_CLOSED);
		assertThat(this.breaker.getState()).isNotEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void aLeasedDecisionOfAProbingCircuitReturnsOnceTheBreakerHeardItsProbe() {
		DefaultRateLimiter limiter = limiter(Duration.ofMillis(500));
		RateLimitRequest leased = sliceTakenThenCircuitOpened(limiter);
		this.redis.restart();
		// the connection back (a probe outside the breaker changes nothing of it), the open wait over long since
		Wait.until("the limiter's connection back", Duration.ofSeconds(90), () -> {
			try {
				this.counting.probe(leased).block(Duration.ofSeconds(1));
				return true;
			}
			catch (RuntimeException ex) {
				return false;
			}
		});
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		// the breaker's two permitted calls, each answered from the slice: each decision returns after its probe
		// was heard, so the next request finds the permit free and, after the second, the circuit closed
		assertThat(limiter.check(leased).allowed()).isTrue();
		assertThat(limiter.check(leased).allowed()).isTrue();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void answersFromMemoryDoNotHideRedisFailuresFromAClosedCircuit() {
		DefaultRateLimiter limiter = limiter();
		// two leased entries: never decided at once, a guarded call answered from the slices
		RateLimitRequest both = RateLimitRequest.builder().add(BUSY, "alice", 1).add(BUSY_TOO, "alice", 1).build();
		assertThat(limiter.check(both).allowed()).isTrue();
		this.redis.kill();
		// three answers from memory for each call Redis fails: counted as successes, they would keep the failure
		// rate at 25%, under the breaker's 50%, and the breaker closed for as long as the slices last
		Wait.until("the circuit open", Duration.ofSeconds(60), () -> {
			for (int i = 0; i < 3; i++) {
				assertThat(limiter.check(both).allowed()).isTrue();
			}
			assertThat(limiter.check(RateLimitRequest.of(EXACT, "bob")).failedClosed()).isTrue();
			return this.breaker.getState() == CircuitBreaker.State.OPEN;
		});
	}

	/** A slice of a thousand taken for alice, then Redis killed and the circuit opened: alice's leased request. */
	private RateLimitRequest sliceTakenThenCircuitOpened(DefaultRateLimiter limiter) {
		RateLimitRequest leased = RateLimitRequest.of(BUSY, "alice");
		assertThat(limiter.check(leased).allowed()).isTrue();
		this.redis.kill();
		openTheCircuit(limiter);
		return leased;
	}

	/** Requests of the exact policy fail for real until the breaker opens (a late answer counts a budget later). */
	private void openTheCircuit(DefaultRateLimiter limiter) {
		Wait.until("the circuit open", Duration.ofSeconds(60), () -> {
			assertThat(limiter.check(RateLimitRequest.of(EXACT, "bob")).failedClosed()).isTrue();
			return this.breaker.getState() == CircuitBreaker.State.OPEN;
		});
	}

	private DefaultRateLimiter limiter() {
		return limiter(Duration.ofMinutes(1));
	}

	private DefaultRateLimiter limiter(Duration openFor) {
		this.redis = RedisServer.start();
		this.resources.add(this.redis);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		this.resources.add(factory::destroy);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
		backend.connect();
		LeaseSettings thousand = new LeaseSettings(1000, Duration.ofMinutes(1), Duration.ofMinutes(1));
		LeasingBackend leasing = new LeasingBackend(backend,
				Map.of(LEASED.name(), LEASE, BUSY.name(), thousand, BUSY_TOO.name(), thousand));
		leasing.start();
		this.resources.add(leasing);
		this.breaker = CircuitBreaker.of("ratelimit-redis", CircuitBreakerConfig.custom()
			.slidingWindow(4, 4, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.failureRateThreshold(50)
			.waitDurationInOpenState(openFor)
			.permittedNumberOfCallsInHalfOpenState(2)
			.build());
		this.counting = new CountingBackend(leasing);
		return DefaultRateLimiter.builder(this.counting)
			.timeout(Duration.ofSeconds(2))
			.circuitBreaker(this.breaker)
			.observationRegistry(this.observations)
			.build();
	}

}
