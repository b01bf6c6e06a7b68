package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.stream.IntStream;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.FixedWindows;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.within;

/**
 * The local denial cache against real Redis (standalone and Cluster), at explicit times: whatever it answers, the
 * backend would have answered the same, figure for figure, and a hot identity costs the backend a call per denial
 * period instead of one per request.
 */
class DenialCacheTests {

	private static final List<RateLimitPolicy> CACHEABLE = List.of(
			RateLimitPolicy.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).limit(7).window(Duration.ofMillis(700)).burst(12).build(),
			RateLimitPolicy.builder("gc").algorithm(Algorithm.GCRA).limit(9).window(Duration.ofMillis(1300)).burst(4).build(),
			RateLimitPolicy.builder("sl").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(6).window(Duration.ofMillis(900))
				.minInterval(Duration.ofMillis(20)).build(),
			RateLimitPolicy.builder("sn").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(5).window(Duration.ofMillis(600)).build(),
			RateLimitPolicy.builder("sc").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(11).window(Duration.ofMillis(1000)).build(),
			RateLimitPolicy.builder("fw").algorithm(Algorithm.FIXED_WINDOW).limit(8).window(Duration.ofMillis(500)).build());

	static List<Backends> redisKinds() {
		return Backends.redis();
	}

	/** Two limiters on one Redis under two key prefixes: one with the cache, one without, each on fresh state. */
	private record Twins(CountingBackend cachedBackend, DefaultRateLimiter cached, CountingBackend plainBackend,
			DefaultRateLimiter plain) {

		static Twins on(Backends kind) {
			Backends.Fixture fixture = kind.fresh();
			CountingBackend cachedBackend = new CountingBackend(new RedisRateLimitBackend(fixture.factory(), "dc-a:"));
			CountingBackend plainBackend = new CountingBackend(new RedisRateLimitBackend(fixture.factory(), "dc-b:"));
			return new Twins(cachedBackend,
					DefaultRateLimiter.builder(cachedBackend).guarded(false).denialCache(RateLimitDenialCache.create()).build(),
					plainBackend, new DefaultRateLimiter(plainBackend));
		}

		RateLimitDenialCache cache() {
			RateLimitDenialCache cache = this.cached.denialCache();
			assertThat(cache).isNotNull();
			return cache;
		}

		/**
		 * Checks a request on both; asserts they agree and returns whether the cached one answered without a call.
		 */
		boolean check(RateLimitRequest request, boolean async, String step, List<RateLimitDecision> out) {
			int calls = this.cachedBackend.acquisitions();
			RateLimitDecision withCache = async ? this.cached.checkAsync(request).block() : this.cached.check(request);
			RateLimitDecision without = async ? this.plain.checkAsync(request).block() : this.plain.check(request);
			boolean answeredFromCache = this.cachedBackend.acquisitions() == calls;
			assertThat(withCache.allowed()).as("%s: %s", step, request.entries()).isEqualTo(without.allowed());
			if (answeredFromCache) {
				assertThat(withCache.allowed()).as("%s: a cached answer admits nothing", step).isFalse();
				assertThat(withCache.decisions()).as("%s: the denials answered", step).isNotEmpty();
				for (PolicyDecision cached : withCache.decisions()) {
					PolicyDecision truth = without.decisions()
						.stream()
						.filter((decision) -> decision.policy().name().equals(cached.policy().name())
								&& decision.identity().equals(cached.identity()))
						.findFirst()
						.orElseThrow();
					assertSameFigures(cached, truth, step + ": " + request.entries());
				}
			}
			else {
				assertThat(withCache.decisions()).as("%s: %s", step, request.entries()).isEqualTo(without.decisions());
			}
			out.add(withCache);
			out.add(without);
			return answeredFromCache;
		}

		/**
		 * The figures of a cached denial are those Redis gives, but for its rounding of waits to a microsecond: the
		 * same wait computed at two times can differ by one (a token bucket of 10 per second says 30001 us where
		 * its earlier answer, counted down, says 30000).
		 */
		private static void assertSameFigures(PolicyDecision cached, PolicyDecision truth, String description) {
			assertThat(cached.policy()).as(description).isEqualTo(truth.policy());
			assertThat(cached.allowed()).as(description).isEqualTo(truth.allowed());
			assertThat(cached.remaining()).as(description).isEqualTo(truth.remaining());
			assertThat(cached.enforcement()).as(description).isEqualTo(truth.enforcement());
			assertThat(micros(cached.retryAfter())).as("retry-after, " + description)
				.isCloseTo(micros(truth.retryAfter()), within(1L));
			assertThat(micros(cached.resetAfter())).as("reset-after, " + description)
				.isCloseTo(micros(truth.resetAfter()), within(1L));
		}

		private static long micros(Duration duration) {
			return duration.toNanos() / 1_000;
		}

	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void neverAnswersOtherwiseThanRedisWould(Backends kind) {
		Twins twins = Twins.on(kind);
		List<String> identities = List.of("u1", "u2", "a very {odd} identity\n");
		Random random = new Random(20261124L);
		long now = Backends.Clock.T0 + 123_457L;
		int fromCache = 0;
		int denied = 0;
		int multiFromCache = 0;
		int costlyFromCache = 0;
		for (int step = 0; step < 2500; step++) {
			now += random.nextInt(12_000);
			RateLimitRequest request;
			try {
				RateLimitRequest.Builder builder = RateLimitRequest.builder().at(now);
				int count = (random.nextInt(4) == 0) ? 2 : 1;
				for (int i = 0; i < count; i++) {
					RateLimitPolicy policy = CACHEABLE.get(random.nextInt(CACHEABLE.size()));
					long cost = 1 + random.nextInt((int) Math.min(3, policy.capacity()));
					builder.add(policy, identities.get(random.nextInt(identities.size())), cost);
				}
				request = builder.build();
			}
			catch (IllegalArgumentException ex) {
				continue; // the same policy and identity drawn twice beyond the capacity
			}
			List<RateLimitDecision> decisions = new ArrayList<>(2);
			boolean cached = twins.check(request, random.nextBoolean(), "step " + step, decisions);
			if (cached) {
				fromCache++;
				multiFromCache += (request.entries().size() > 1) ? 1 : 0;
				costlyFromCache += request.entries().stream().anyMatch((entry) -> entry.cost() > 1) ? 1 : 0;
			}
			if (!decisions.get(0).allowed()) {
				denied++;
			}
			else if (random.nextInt(8) == 0) {
				// a later check denied it: both give everything back, which the cache must forget
				decisions.get(0).reversal().release();
				decisions.get(1).reversal().release();
			}
		}
		System.out.printf("denial cache trace, %s: %d denied, %d from the cache (%d of two policies, %d of cost above 1)%n",
				kind, denied, fromCache, multiFromCache, costlyFromCache);
		assertThat(denied).as("the trace must deny often").isGreaterThan(800);
		assertThat(fromCache).as("denials answered from the cache").isGreaterThan(100);
		assertThat(multiFromCache).as("requests of two policies answered from the cache").isGreaterThan(0);
		assertThat(costlyFromCache).as("requests of cost above 1 answered from the cache").isGreaterThan(0);
		assertThat(twins.cache().hitCount()).isEqualTo(fromCache);
		assertThat(twins.cachedBackend.acquisitions()).isEqualTo(twins.plainBackend.acquisitions() - fromCache);
	}

	/**
	 * What the windowed algorithms' admissions say when they take the last of the quota (the sliding window counter
	 * above all): hot identities under small limits, requests close together, a policy whose window and limit change
	 * under its name, give-backs; replayed with and without the cache, the same decisions and figures, and requests
	 * denied from an admission's figure before any denial of the identity reached Redis. (Time only moves forward
	 * here, as the cache assumes: a later call prunes what an earlier time would still count, so a replay that goes
	 * back is not answered as Redis would; the figure itself at a clock that went back is checked against Redis in
	 * {@code SingleEntryScriptTests}.)
	 */
	@ParameterizedTest
	@MethodSource("redisKinds")
	void windowedAdmissionsThatTakeTheLastOfTheQuotaAnswerAsRedisWould(Backends kind) {
		Twins twins = Twins.on(kind);
		List<RateLimitPolicy> policies = List.of(
				RateLimitPolicy.builder("sc3").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(3).window(Duration.ofMillis(300)).build(),
				RateLimitPolicy.builder("sc5").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(5).window(Duration.ofMillis(1000)).build(),
				RateLimitPolicy.builder("sc5").algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(4).window(Duration.ofMillis(600)).build(),
				RateLimitPolicy.builder("fw4").algorithm(Algorithm.FIXED_WINDOW).limit(4).window(Duration.ofMillis(400)).build(),
				RateLimitPolicy.builder("sl3").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(3).window(Duration.ofMillis(500)).build(),
				RateLimitPolicy.builder("sl4").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(4).window(Duration.ofMillis(400))
					.minInterval(Duration.ofMillis(30)).build());
		List<String> identities = List.of("u1", "u2");
		Map<String, Boolean> lastAnswerAdmitted = new HashMap<>();
		Map<Algorithm, Integer> fromAdmissions = new EnumMap<>(Algorithm.class);
		Random random = new Random(20261125L);
		long now = Backends.Clock.T0 + 777_777L;
		int fromCache = 0;
		for (int step = 0; step < 3000; step++) {
			now += random.nextInt(15_000);
			RateLimitPolicy policy = policies.get(random.nextInt(policies.size()));
			String identity = identities.get(random.nextInt(identities.size()));
			long cost = (random.nextInt(6) == 0) ? 2 : 1;
			RateLimitRequest request = RateLimitRequest.builder().at(now).add(policy, identity, cost).build();
			List<RateLimitDecision> decisions = new ArrayList<>(2);
			String key = policy.name() + "/" + identity;
			if (twins.check(request, random.nextBoolean(), "step " + step, decisions)) {
				fromCache++;
				if (lastAnswerAdmitted.getOrDefault(key, false)) {
					fromAdmissions.merge(policy.algorithm(), 1, Integer::sum);
				}
				continue;
			}
			lastAnswerAdmitted.put(key, decisions.get(0).allowed());
			if (decisions.get(0).allowed() && random.nextInt(10) == 0) {
				decisions.get(0).reversal().release();
				decisions.get(1).reversal().release();
				lastAnswerAdmitted.put(key, false);
			}
		}
		System.out.printf("denial cache, windowed trace, %s: %d from the cache, from admissions: %s%n", kind, fromCache,
				fromAdmissions);
		assertThat(fromAdmissions.getOrDefault(Algorithm.SLIDING_WINDOW_COUNTER, 0)).isGreaterThan(100);
		assertThat(fromAdmissions.getOrDefault(Algorithm.FIXED_WINDOW, 0)).isGreaterThan(20);
		assertThat(fromAdmissions.getOrDefault(Algorithm.SLIDING_WINDOW_LOG, 0)).isGreaterThan(20);
		assertThat(twins.cache().hitCount()).isEqualTo(fromCache);
		assertThat(twins.cachedBackend.acquisitions()).isEqualTo(twins.plainBackend.acquisitions() - fromCache);
	}

	/**
	 * A sliding window log's minimum interval can outlast the wait for quota: the quota then comes back before the
	 * denial ends (its remaining grows), so neither such a denial nor the admission before it is kept.
	 */
	@ParameterizedTest
	@MethodSource("redisKinds")
	void aMinimumIntervalThatOutlastsTheWaitForQuotaIsNotKept(Backends kind) {
		Twins twins = Twins.on(kind);
		RateLimitPolicy policy = RateLimitPolicy.builder("sl-min").algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(4)
			.window(Duration.ofMillis(400)).minInterval(Duration.ofMillis(30)).build();
		List<RateLimitDecision> decisions = new ArrayList<>();
		// the fourth takes the last of the quota; the oldest entry leaves at 400 ms, the interval ends at 410 ms
		for (long at : new long[] { 0, 100_000, 200_000, 380_000 }) {
			RateLimitRequest request = RateLimitRequest.builder().at(Backends.Clock.T0 + at).add(policy, "u").build();
			assertThat(twins.check(request, false, "at " + at, decisions)).isFalse();
			assertThat(decisions.get(decisions.size() - 1).allowed()).isTrue();
		}
		RateLimitRequest at390 = RateLimitRequest.builder().at(Backends.Clock.T0 + 390_000).add(policy, "u").build();
		assertThat(twins.check(at390, false, "at 390 ms", decisions)).as("asked of Redis").isFalse();
		PolicyDecision denied = decisions.get(decisions.size() - 1).decisions().get(0);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.remaining()).isZero();
		assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(20));
		// quota is back while the interval still denies: Redis says one remains
		RateLimitRequest at401 = RateLimitRequest.builder().at(Backends.Clock.T0 + 401_000).add(policy, "u").build();
		assertThat(twins.check(at401, false, "at 401 ms", decisions)).as("asked of Redis").isFalse();
		PolicyDecision later = decisions.get(decisions.size() - 1).decisions().get(0);
		assertThat(later.allowed()).isFalse();
		assertThat(later.remaining()).isEqualTo(1);
		assertThat(later.retryAfter()).isEqualTo(Duration.ofMillis(9));
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aHotIdentityAtTenTimesItsLimitCostsRedisOneCallPerDenialPeriod(Backends kind) {
		for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.SLIDING_WINDOW_LOG,
				Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.FIXED_WINDOW)) {
			Twins twins = Twins.on(kind);
			RateLimitPolicy policy = RateLimitPolicy.builder("hot-" + algorithm.code())
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofSeconds(1))
				.build();
			long now = Backends.Clock.T0;
			int admitted = 0;
			int requests = 3000;
			List<RateLimitDecision> decisions = new ArrayList<>();
			for (int i = 0; i < requests; i++) {
				// 100 requests a second for 30 seconds: ten times the limit
				RateLimitRequest request = RateLimitRequest.builder().at(now + i * 10_000L).add(policy, "hot").build();
				twins.check(request, (i % 2) == 0, algorithm.id() + " request " + i, decisions);
				if (decisions.get(decisions.size() - 1).allowed()) {
					admitted++;
				}
			}
			int denied = requests - admitted;
			int deniedCalls = twins.cachedBackend.acquisitions() - admitted;
			double perDenied = (double) deniedCalls / denied;
			System.out.printf("denial cache, %s, %s: %d requests, %d admitted, %d denied, %d Redis calls for them "
					+ "(%.4f per denied request; without the cache %d calls in all)%n", kind, algorithm.id(), requests,
					admitted, denied, deniedCalls, perDenied, twins.plainBackend.acquisitions());
			assertThat(admitted).as(algorithm.id()).isBetween(260, 320);
			// every admission that leaves no room for the next request says until when it is denied: the denials
			// that follow are answered from the cache (learning from denials alone, the first after each admission
			// would reach Redis: one call per nine denials at 10x the limit); issue #9's target is 0.05
			assertThat(perDenied).as(algorithm.id()).isLessThanOrEqualTo(0.05);
		}
	}


	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(Duration.ofHours(1)).build();
	}

	/** A limiter with a cache over a counted Redis backend. */
	private static DefaultRateLimiter cachedLimiter(CountingBackend backend) {
		return DefaultRateLimiter.builder(backend).guarded(false).denialCache(RateLimitDenialCache.create(100)).build();
	}

	private static CountingBackend counted(Backends kind) {
		return new CountingBackend(kind.fresh().backend);
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void concurrencyDenialsAreNeverCached(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy permits = policy("permits", Algorithm.CONCURRENCY, 1);
		RateLimitDecision holding = limiter.check(RateLimitRequest.of(permits, "client"));
		assertThat(holding.allowed()).isTrue();
		for (int i = 0; i < 3; i++) {
			assertThat(limiter.check(RateLimitRequest.of(permits, "client")).allowed()).isFalse();
		}
		assertThat(backend.acquisitions()).as("every denial asked Redis").isEqualTo(4);
		// the permit comes back at any time: the next request is admitted at once
		holding.permit().release();
		assertThat(limiter.check(RateLimitRequest.of(permits, "client")).allowed()).isTrue();
		assertThat(limiter.denialCache().size()).isZero();
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aHotIdentityIsDeniedFromTheCacheOnBothPathsWithoutACall(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy api = policy("api", Algorithm.FIXED_WINDOW, 2);
		RateLimitRequest request = RateLimitRequest.of(api, "client");
		// the admissions and the denials held until the window's end must all fall in one hour
		FixedWindows.awayFromWindowEnd(api.window(), Duration.ofSeconds(10));
		assertThat(limiter.check(request).allowed()).isTrue();
		// the second takes the last of the window and says so: what follows is denied without a call
		RateLimitDecision last = limiter.check(request);
		assertThat(last.allowed()).isTrue();
		assertThat(backend.acquisitions()).isEqualTo(2);
		// on Redis's clock: the wait counts down from when the admitting call was sent, to the window's end
		RateLimitDecision denied = limiter.check(request);
		RateLimitDecision blocking = limiter.check(request);
		RateLimitDecision nonBlocking = limiter.checkAsync(request).block();
		assertThat(backend.acquisitions()).as("answered from the cache").isEqualTo(2);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfter()).isPositive().isLessThanOrEqualTo(last.decisions().get(0).resetAfter());
		for (RateLimitDecision cached : List.of(blocking, nonBlocking)) {
			assertThat(cached.allowed()).isFalse();
			assertThat(cached.permit()).isSameAs(Permit.NONE);
			assertThat(cached.reversal()).isSameAs(Permit.NONE);
			PolicyDecision decision = cached.decisions().get(0);
			assertThat(decision.enforcement()).isEqualTo(Enforcement.ENFORCED);
			assertThat(decision.remaining()).isZero();
			assertThat(decision.retryAfter()).isPositive().isLessThanOrEqualTo(denied.retryAfter());
			assertThat(decision.resetAfter()).isPositive().isLessThanOrEqualTo(denied.decisions().get(0).resetAfter());
		}
		assertThat(limiter.denialCache().hitCount()).isEqualTo(3);
		// a larger cost of a fixed window waits for the same end of the window
		RateLimitDecision costlier = limiter.check(RateLimitRequest.builder().add(api, "client", 2).build());
		assertThat(costlier.allowed()).isFalse();
		assertThat(backend.acquisitions()).isEqualTo(2);
		// another identity is asked of Redis
		assertThat(limiter.check(RateLimitRequest.of(api, "other")).allowed()).isTrue();
		assertThat(backend.acquisitions()).isEqualTo(3);
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aRequestOfSeveralPoliciesReportsTheCachedDenialsOnlyAndTakesNothing(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy strict = policy("strict", Algorithm.SLIDING_WINDOW_LOG, 1);
		RateLimitPolicy roomy = policy("roomy", Algorithm.TOKEN_BUCKET, 100);
		assertThat(limiter.check(RateLimitRequest.of(strict, "client")).allowed()).isTrue();
		assertThat(limiter.check(RateLimitRequest.of(strict, "client")).allowed()).isFalse();
		int calls = backend.acquisitions();
		RateLimitRequest both = RateLimitRequest.builder().add(roomy, "client").add(strict, "client").build();
		RateLimitDecision decision = limiter.check(both);
		assertThat(backend.acquisitions()).isEqualTo(calls);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.decisions()).extracting((each) -> each.policy().name()).containsExactly("strict");
		assertThat(decision.deciding().orElseThrow().policy()).isEqualTo(strict);
		// as a denied call would have: the other policy took nothing
		assertThat(backend.inspect(RateLimitRequest.of(roomy, "client")).get(0).remaining()).isEqualTo(100);
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aShadowDenialIsCachedAndStillAdmits(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy shadow = policy("shadow", Algorithm.GCRA, 1).toBuilder().shadow(true).build();
		RateLimitPolicy enforced = policy("enforced", Algorithm.FIXED_WINDOW, 100);
		assertThat(limiter.check(RateLimitRequest.of(shadow, "client")).shadowDenied()).isFalse();
		RateLimitDecision first = limiter.check(RateLimitRequest.of(shadow, "client"));
		assertThat(first.allowed()).isTrue();
		assertThat(first.shadowDenied()).isTrue();
		int calls = backend.acquisitions();
		RateLimitDecision alone = limiter.check(RateLimitRequest.of(shadow, "client"));
		assertThat(backend.acquisitions()).as("the shadow denial answered from the cache").isEqualTo(calls);
		assertThat(alone.allowed()).isTrue();
		assertThat(alone.shadowDenied()).isTrue();
		assertThat(alone.decisions()).isEmpty();
		// with an enforced policy: the shadow part comes from the cache, the enforced part from Redis and counts
		RateLimitDecision mixed = limiter.check(
				RateLimitRequest.builder().add(enforced, "client").add(shadow, "client").build());
		assertThat(backend.acquisitions()).isEqualTo(calls + 1);
		assertThat(mixed.allowed()).isTrue();
		assertThat(mixed.shadowDenied()).isTrue();
		assertThat(mixed.decisions()).singleElement().satisfies((decision) -> assertThat(decision.remaining()).isEqualTo(99));
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void decisionsOfTheFailureModesAreNeverCached(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(backend)
			.timeout(Duration.ofSeconds(5))
			.denialCache(RateLimitDenialCache.create())
			.build();
		RateLimitPolicy closed = policy("closed", Algorithm.TOKEN_BUCKET, 1).toBuilder()
			.failureMode(FailureMode.CLOSED)
			.build();
		RateLimitPolicy local = policy("local", Algorithm.TOKEN_BUCKET, 1).toBuilder()
			.failureMode(FailureMode.LOCAL)
			.build();
		backend.failWith(new IllegalStateException("Redis is unreachable"));
		for (int i = 0; i < 3; i++) {
			RateLimitDecision refused = limiter.check(RateLimitRequest.of(closed, "client"));
			assertThat(refused.allowed()).isFalse();
			assertThat(refused.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_CLOSED);
		}
		assertThat(limiter.check(RateLimitRequest.of(local, "client")).allowed()).isTrue();
		RateLimitDecision locallyDenied = limiter.check(RateLimitRequest.of(local, "client"));
		assertThat(locallyDenied.allowed()).isFalse();
		assertThat(locallyDenied.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		assertThat(limiter.checkAsync(RateLimitRequest.of(local, "client")).block().allowed()).isFalse();
		assertThat(backend.acquisitions()).as("every degraded decision tried Redis").isEqualTo(6);
		assertThat(limiter.denialCache().size()).isZero();
		// Redis back: its admission takes the only token and says so, so the next request is answered from the
		// cache, and so is the one after while Redis fails again (it is Redis's statement)
		backend.failWith(null);
		assertThat(limiter.check(RateLimitRequest.of(closed, "client")).allowed()).isTrue();
		assertThat(limiter.check(RateLimitRequest.of(closed, "client")).allowed()).isFalse();
		backend.failWith(new IllegalStateException("Redis is unreachable"));
		RateLimitDecision cached = limiter.check(RateLimitRequest.of(closed, "client"));
		assertThat(cached.allowed()).isFalse();
		assertThat(cached.degraded()).isFalse();
		assertThat(backend.acquisitions()).isEqualTo(7);
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aGiveBackForgetsTheCachedDenialsOfWhatItGaveBack(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy api = policy("api", Algorithm.TOKEN_BUCKET, 1);
		for (boolean async : new boolean[] { false, true }) {
			String identity = "client-" + async;
			RateLimitDecision admitted = limiter.check(RateLimitRequest.of(api, identity));
			assertThat(admitted.allowed()).isTrue();
			assertThat(limiter.check(RateLimitRequest.of(api, identity)).allowed()).isFalse();
			assertThat(limiter.check(RateLimitRequest.of(api, identity)).allowed()).as("from the cache").isFalse();
			int calls = backend.acquisitions();
			// a later check of the admitted request denied it: what it took goes back, and the denial is forgotten
			if (async) {
				admitted.reversal().releaseAsync().block();
			}
			else {
				admitted.reversal().release();
			}
			assertThat(limiter.check(RateLimitRequest.of(api, identity)).allowed()).isTrue();
			assertThat(backend.acquisitions()).isEqualTo(calls + 1);
		}
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void invalidationsForgetWhatTheyName(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitDenialCache cache = limiter.denialCache();
		RateLimitPolicy first = policy("first", Algorithm.SLIDING_WINDOW_COUNTER, 1);
		RateLimitPolicy second = policy("second", Algorithm.GCRA, 1);
		List<RateLimitRequest> requests = List.of(RateLimitRequest.of(first, "a"), RateLimitRequest.of(first, "b"),
				RateLimitRequest.of(second, "a"), RateLimitRequest.of(second, "b"));
		for (RateLimitRequest request : requests) {
			limiter.check(request);
			assertThat(limiter.check(request).allowed()).isFalse();
		}
		assertThat(cache.size()).isEqualTo(4);
		cache.invalidate("first", "a");
		assertThat(cache.size()).isEqualTo(3);
		cache.invalidateIdentity("b");
		assertThat(cache.size()).isEqualTo(1);
		cache.invalidatePolicy("second");
		assertThat(cache.size()).isZero();
		for (RateLimitRequest request : requests) {
			limiter.check(request);
		}
		assertThat(cache.size()).isEqualTo(4);
		cache.invalidateAll();
		assertThat(cache.size()).isZero();
		int calls = backend.acquisitions();
		// a reset the cache was told of: the identity starts fresh at once
		backend.resetMatching("first", "a");
		limiter.denialCache().invalidate("first", "a");
		assertThat(limiter.check(requests.get(0)).allowed()).isTrue();
		assertThat(backend.acquisitions()).isEqualTo(calls + 1);
	}

	@ParameterizedTest
	@MethodSource("redisKinds")
	void aPolicyUnderOtherLimitsIsNotAnsweredFromTheOldOnesDenials(Backends kind) {
		CountingBackend backend = counted(kind);
		DefaultRateLimiter limiter = cachedLimiter(backend);
		RateLimitPolicy api = policy("api", Algorithm.SLIDING_WINDOW_LOG, 1);
		// the admission takes the only unit and says so: the next request is denied from the cache
		limiter.check(RateLimitRequest.of(api, "client"));
		assertThat(limiter.check(RateLimitRequest.of(api, "client")).allowed()).isFalse();
		assertThat(backend.acquisitions()).isEqualTo(1);
		// an override raised the limit: Redis decides under it
		RateLimitPolicy raised = api.toBuilder().limit(5).build();
		assertThat(limiter.check(RateLimitRequest.of(raised, "client")).allowed()).isTrue();
		assertThat(backend.acquisitions()).isEqualTo(2);
		// the same limits in another failure mode or cost decide alike: answered from the cache
		limiter.check(RateLimitRequest.of(api, "client"));
		int calls = backend.acquisitions();
		RateLimitPolicy closed = api.toBuilder().failureMode(FailureMode.CLOSED).build();
		RateLimitDecision cached = limiter.check(RateLimitRequest.of(closed, "client"));
		assertThat(cached.allowed()).isFalse();
		assertThat(cached.decisions().get(0).policy()).isSameAs(closed);
		assertThat(backend.acquisitions()).isEqualTo(calls);
	}

	@ParameterizedTest
	@EnumSource(GuardedRateLimiterTests.Path.class)
	void aRequestAcrossClusterMastersIsDeniedFromTheCacheBeforeItIsSplitByMaster(GuardedRateLimiterTests.Path path) {
		CountingBackend backend = counted(Backends.REDIS_CLUSTER);
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(backend)
			.timeout(Duration.ofSeconds(5))
			.circuitBreaker(CircuitBreaker.ofDefaults("split"))
			.denialCache(RateLimitDenialCache.create())
			.build();
		// a sliding window log: a fixed window's boundary (each whole hour) after the admission would refill it
		RateLimitPolicy strict = policy("strict", Algorithm.SLIDING_WINDOW_LOG, 1);
		RateLimitPolicy roomy = policy("roomy", Algorithm.TOKEN_BUCKET, 100);
		assertThat(path.check(limiter, RateLimitRequest.of(strict, "a")).allowed()).isTrue();
		assertThat(path.check(limiter, RateLimitRequest.of(strict, "a")).allowed()).isFalse();
		String other = IntStream.range(0, 100)
			.mapToObj((i) -> "b" + i)
			.filter((identity) -> !Objects.equals(backend.shard(new RateLimitRequest.Entry(roomy, identity, 1)),
					backend.shard(new RateLimitRequest.Entry(strict, "a", 1))))
			.findFirst()
			.orElseThrow();
		int calls = backend.acquisitions();
		// two entries on the master of "a" (one of them denied in the cache), one on another master
		RateLimitDecision decision = path.check(limiter, RateLimitRequest.builder()
			.add(roomy, "a")
			.add(strict, "a")
			.add(roomy, other)
			.build());
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.decisions()).extracting((each) -> each.policy().name()).containsExactly("strict");
		assertThat(backend.acquisitions()).as("no call to either master").isEqualTo(calls);
		for (String identity : List.of("a", other)) {
			assertThat(backend.inspect(RateLimitRequest.of(roomy, identity)).get(0).remaining()).isEqualTo(100);
		}
	}

	@Test
	void anUnguardedLimiterWithACacheThrowsBackendFailuresAndTakesNoGuardSettings() {
		CountingBackend backend = new CountingBackend(new LocalRateLimitBackend());
		DefaultRateLimiter limiter = cachedLimiter(backend);
		assertThat(limiter.circuitBreaker()).isNull();
		assertThat(limiter.timeout()).isNull();
		backend.failWith(new IllegalStateException("down"));
		RateLimitPolicy api = policy("api", Algorithm.FIXED_WINDOW, 1);
		assertThatIllegalStateException()
			.isThrownBy(() -> limiter.check(RateLimitRequest.of(api, "client")))
			.withMessage("down");
		assertThatIllegalStateException()
			.isThrownBy(() -> DefaultRateLimiter.builder(backend).guarded(false).timeout(Duration.ofSeconds(1)).build())
			.withMessageContaining("unguarded");
		// guarded by default: the failure mode (open) decides
		RateLimitDecision failedOpen = DefaultRateLimiter.builder(backend).build().check(RateLimitRequest.of(api, "client"));
		assertThat(failedOpen.allowed()).isTrue();
		assertThat(failedOpen.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
		assertThat(DefaultRateLimiter.builder(backend).build().denialCache()).isNull();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitDenialCache.create(0));
	}

}
