package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.reactive.RateLimitWebFilter;
import io.github.ratelimit.spring.servlet.RateLimitFilter;
import io.github.ratelimit.testkit.RedisServer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet and WebFlux filters over a leased policy on a real Redis: requests the slice holds are decided on the
 * request's thread (RateLimiter.checkAtOnce), the others through Redis; either way exactly the limit is admitted, each
 * request gets its headers from what Redis and the slice know, the decision listener hears of each request once, and
 * on WebFlux each decision is observed under the exchange's observation (Reactor's context, not the thread's).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class LeasedFilterTests {

	private static final RateLimitPolicy LEASED = RateLimitPolicy.builder("leased")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(10)
		.window(Duration.ofHours(1))
		.failureMode(FailureMode.CLOSED)
		.build();

	private final RedisServer redis = RedisServer.start();

	private final LettuceConnectionFactory factory = new LettuceConnectionFactory(
			new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()));

	private static final RateLimitResponses RESPONSES = new RateLimitResponses(RateLimitHeaders.ALL,
			new ProblemDetailRejectionHandler(), System::currentTimeMillis);

	/** Where Spring puts an exchange's observation in Reactor's context (Micrometer's ObservationThreadLocalAccessor). */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	private final AtomicInteger heard = new AtomicInteger();

	private final AtomicInteger atOnce = new AtomicInteger();

	private final AtomicInteger throughMono = new AtomicInteger();

	private final AtomicInteger askedAtOnce = new AtomicInteger();

	private LeasingBackend leasing;

	@AfterEach
	void stop() {
		if (this.leasing != null) {
			this.leasing.close();
		}
		this.factory.destroy();
		this.redis.close();
	}

	@Test
	void theLimitIsAdmittedMostlyFromTheSliceWithTheHeadersOfEachDecisionAndEachDecisionHeardOnce() throws Exception {
		DefaultRateLimiter limiter = leasedLimiter(ObservationRegistry.NOOP);
		RateLimitFilter filter = new RateLimitFilter(enforcer(counting(limiter)), RESPONSES);
		List<String> remaining = new ArrayList<>();
		int admitted = 0;
		for (int i = 0; i < 15; i++) {
			MockHttpServletResponse response = new MockHttpServletResponse();
			MockFilterChain chain = new MockFilterChain();
			filter.doFilter(new MockHttpServletRequest("GET", "/api/orders"), response, chain);
			if (response.getStatus() == 200) {
				admitted++;
				assertThat(chain.getRequest()).isNotNull();
				remaining.add(response.getHeader(RateLimitHeaders.X_REMAINING));
			}
			else {
				assertThat(response.getStatus()).isEqualTo(429);
				assertThat(response.getHeader("Retry-After")).isNotNull();
			}
			assertThat(response.getHeader(RateLimitHeaders.RATELIMIT_POLICY)).isEqualTo("\"leased\";q=10;w=3600");
		}
		assertThat(admitted).isEqualTo(10);
		assertThat(remaining).containsExactly("9", "8", "7", "6", "5", "4", "3", "2", "1", "0");
		assertThat(this.heard).hasValue(15);
		assertThat(this.atOnce.get()).as("at least the first slice's three after the request that took it")
			.isBetween(3, 9);
		assertThat(this.throughMono).as("asked at once first, each decision not made at once went through a Mono once")
			.hasValue(15 - this.atOnce.get());
		assertThat(this.askedAtOnce.get()).as("the backend asked at once at most once per request").isBetween(1, 15);
	}

	@Test
	void theWebFilterAdmitsTheLimitMostlyFromTheSliceObservedUnderTheExchangesObservation() {
		ObservationRegistry registry = ObservationRegistry.create();
		List<Observation.Context> observed = recording(registry);
		serveOnWebFlux(counting(leasedLimiter(registry)), registry);
		assertThat(this.atOnce.get()).as("at least the first slice's three after the request that took it")
			.isBetween(3, 9);
		assertThat(this.throughMono).as("asked at once first, each decision not made at once went through a Mono once")
			.hasValue(15 - this.atOnce.get());
		assertThat(this.askedAtOnce.get()).as("the backend asked at once at most once per request").isBetween(1, 15);
		assertDecisionsObservedUnderTheExchanges(observed);
	}

	@Test
	void aLimiterWrappingAnotherWithoutTheReactiveAtOnceFormKeepsItsDecisionsObservedUnderTheExchanges() {
		ObservationRegistry registry = ObservationRegistry.create();
		List<Observation.Context> observed = recording(registry);
		DefaultRateLimiter limiter = leasedLimiter(registry);
		RateLimiter wrapping = new RateLimiter() { // as one written before checkAtOnce(request, context) existed

			@Override
			public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
				return limiter.checkAsync(request);
			}

			@Override
			public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request) {
				return limiter.checkAtOnce(request);
			}

		};
		serveOnWebFlux(wrapping, registry);
		assertDecisionsObservedUnderTheExchanges(observed);
	}

	@Test
	void aReactiveAdmissionCancelledBeforeItsSubscriberAsksTakesNothing() {
		RateLimitEnforcer enforcer = enforcer(counting(leasedLimiter(ObservationRegistry.NOOP)));
		RequestContext request = TestRequest.get("/api/orders");
		List<RateLimitEnforcer.Target> targets = enforcer.ruleTargets("GET", "/api/orders");
		RateLimitDecision first = new DecisionScope().admit(enforcer, request, targets, null, null, (admitted) -> {
		}).block(Duration.ofSeconds(10)); // through Redis: takes a slice
		assertThat(first.decisions().get(0).remaining()).isEqualTo(9);
		new DecisionScope().admit(enforcer, request, targets, null, null, (admitted) -> {
		}).subscribe(new BaseSubscriber<RateLimitDecision>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				cancel(); // before asking for the decision
			}

		});
		RateLimitDecision next = new DecisionScope().admit(enforcer, request, targets, null, null, (admitted) -> {
		}).block(Duration.ofSeconds(10));
		assertThat(this.atOnce).as("the next one a spend of the slice").hasValue(1);
		assertThat(next.decisions().get(0).remaining()).as("nothing taken by the cancelled one").isEqualTo(8);
	}

	@Test
	void aLimiterAnsweringNullAfterAtOnceIsAskedThroughCheckAsync() {
		DefaultRateLimiter limiter = leasedLimiter(ObservationRegistry.NOOP);
		RateLimiter nullAfterAtOnce = new RateLimiter() { // as a test's mock that stubs checkAsync alone

			@Override
			public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
				return limiter.checkAsync(request);
			}

			@Override
			@SuppressWarnings("NullAway")
			public Mono<RateLimitDecision> checkAsyncAfterAtOnce(RateLimitRequest request) {
				return null;
			}

		};
		serveOnWebFlux(nullAfterAtOnce, ObservationRegistry.NOOP);
	}

	/** Fifteen exchanges through the WebFlux filter, each under an observation of its own in Reactor's context. */
	private void serveOnWebFlux(RateLimiter limiter, ObservationRegistry registry) {
		RateLimitWebFilter filter = new RateLimitWebFilter(enforcer(limiter), RESPONSES);
		List<String> remaining = new ArrayList<>();
		int admitted = 0;
		for (int i = 0; i < 15; i++) {
			Observation exchangeObservation = Observation.start("http.server.requests", registry);
			MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/orders"));
			AtomicBoolean proceeded = new AtomicBoolean();
			filter.filter(exchange, (passed) -> Mono.fromRunnable(() -> proceeded.set(true)))
				.contextWrite((context) -> context.put(OBSERVATION_KEY, exchangeObservation))
				.block(Duration.ofSeconds(10));
			exchangeObservation.stop();
			HttpStatusCode status = exchange.getResponse().getStatusCode();
			if (status == null || status.value() == 200) {
				admitted++;
				assertThat(proceeded).isTrue();
				remaining.add(exchange.getResponse().getHeaders().getFirst(RateLimitHeaders.X_REMAINING));
			}
			else {
				assertThat(status.value()).isEqualTo(429);
				assertThat(proceeded).isFalse();
				assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isNotNull();
			}
			assertThat(exchange.getResponse().getHeaders().getFirst(RateLimitHeaders.RATELIMIT_POLICY))
				.isEqualTo("\"leased\";q=10;w=3600");
		}
		assertThat(admitted).isEqualTo(10);
		assertThat(remaining).containsExactly("9", "8", "7", "6", "5", "4", "3", "2", "1", "0");
		assertThat(this.heard).hasValue(15);
	}

	private static List<Observation.Context> recording(ObservationRegistry registry) {
		List<Observation.Context> observed = new CopyOnWriteArrayList<>();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				observed.add(context);
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		return observed;
	}

	private static void assertDecisionsObservedUnderTheExchanges(List<Observation.Context> observed) {
		List<Observation.Context> decisions = observed.stream()
			.filter((context) -> !"http.server.requests".equals(context.getName()))
			.toList();
		assertThat(decisions).as("one observation per decision, at once or through Redis").hasSize(15);
		assertThat(decisions).allSatisfy((context) -> assertThat(context.getParentObservation()).isNotNull()
			.satisfies((parent) -> assertThat(parent.getContextView().getName()).isEqualTo("http.server.requests")));
	}

	private DefaultRateLimiter leasedLimiter(ObservationRegistry registry) {
		this.factory.afterPropertiesSet();
		this.factory.start();
		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.factory);
		backend.connect();
		this.leasing = new LeasingBackend(backend,
				Map.of(LEASED.name(), new LeaseSettings(4, Duration.ofMinutes(1), Duration.ofMinutes(1))));
		this.leasing.start();
		return DefaultRateLimiter.builder(askCounting(this.leasing))
			.timeout(Duration.ofSeconds(2))
			.observationRegistry(registry)
			.build();
	}

	/** The backend, counting how often it is asked to answer at once. */
	private RateLimitBackend askCounting(RateLimitBackend backend) {
		return new RateLimitBackend() {

			@Override
			public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
				return backend.acquire(request, requestId);
			}

			@Override
			public @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
				LeasedFilterTests.this.askedAtOnce.incrementAndGet();
				return backend.acquireAtOnce(request, requestId);
			}

			@Override
			public boolean answersAtOnce(RateLimitRequest request) {
				return backend.answersAtOnce(request);
			}

			@Override
			public Mono<Void> probe(RateLimitRequest request) {
				return backend.probe(request);
			}

			@Override
			public Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId,
					List<Long> acquiredAtMicros, List<Long> sequences) {
				return backend.release(entries, requestId, acquiredAtMicros, sequences);
			}

		};
	}

	/** The limiter, counting the decisions it made at once and the checks that went through a {@code Mono}. */
	private RateLimiter counting(DefaultRateLimiter limiter) {
		return new RateLimiter() {

			@Override
			public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
				LeasedFilterTests.this.throughMono.incrementAndGet();
				return limiter.checkAsync(request);
			}

			@Override
			public Mono<RateLimitDecision> checkAsyncAfterAtOnce(RateLimitRequest request) {
				LeasedFilterTests.this.throughMono.incrementAndGet();
				return limiter.checkAsyncAfterAtOnce(request);
			}

			@Override
			public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request) {
				return counted(limiter.checkAtOnce(request));
			}

			@Override
			public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request, ContextView context) {
				return counted(limiter.checkAtOnce(request, context));
			}

			private @Nullable RateLimitDecision counted(@Nullable RateLimitDecision decision) {
				LeasedFilterTests.this.atOnce.addAndGet((decision != null) ? 1 : 0);
				return decision;
			}

		};
	}

	private RateLimitEnforcer enforcer(RateLimiter limiter) {
		return new RateLimitEnforcer(limiter,
				new RateLimitPolicyRegistry(List.of(ConfiguredPolicy.of(LEASED, KeySpec.parse("global", (name) -> {
					throw new IllegalArgumentException(name);
				}), MissingKey.SHARED))),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of(), List.of(LEASED.name()))), (name) -> {
					throw new IllegalArgumentException(name);
				}, FailureMode.OPEN, (decision) -> this.heard.incrementAndGet());
	}

}
