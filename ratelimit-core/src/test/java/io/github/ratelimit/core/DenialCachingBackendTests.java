package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.GuardedRateLimiterTests.Path;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The denial cache's two layers alone, on a real Redis: the backend decorator learns from the answers it passes on
 * and forgets on the give-backs it passes on; the layer before the guard answers a held denial without asking the
 * next layer.
 */
class DenialCachingBackendTests {

	// a sliding window log: a fixed window's boundary (each whole hour) after an admission would refill it
	private static final RateLimitPolicy API = RateLimitPolicy.builder("api")
		.algorithm(Algorithm.SLIDING_WINDOW_LOG)
		.limit(1)
		.window(Duration.ofHours(1))
		.build();

	private final RateLimitDenialCache cache = RateLimitDenialCache.create();

	private final CountingBackend redis = new CountingBackend(
			new RedisRateLimitBackend(Backends.REDIS.fresh().factory(), "dcb:"));

	private final DenialCachingBackend backend = new DenialCachingBackend(this.redis, this.cache);

	@ParameterizedTest
	@EnumSource(Path.class)
	void learnsTheDenialsItPassesOnAndForgetsThemOnAGiveBack(Path path) {
		RateLimitRequest request = RateLimitRequest.of(API, "client-" + path);
		RateLimitBackend.Acquisition admitted = acquire(path, request, "first");
		assertThat(admitted.decisions().get(0).allowed()).isTrue();
		// the window's only unit is taken and the answer says so: the cache holds the denial that follows
		assertThat(this.cache.lookup(request)).isNotNull();
		giveBack(path, request, "first", admitted);
		assertThat(this.cache.lookup(request)).as("forgotten once given back").isNull();
		assertThat(acquire(path, request, "second").decisions().get(0).allowed()).isTrue();
		assertThat(acquire(path, request, "third").decisions().get(0).allowed()).isFalse();
		assertThat(this.cache.lookup(request)).as("learned from the denial").isNotNull();
		assertThat(this.redis.acquisitions()).isEqualTo(3);
		assertThat(this.redis.releases()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void theLayerBeforeTheGuardAnswersAHeldDenialWithoutAskingTheNext(Path path) {
		Decider decider = DenialCachingBackend.answeringFirst(this.cache,
				new UnguardedBackend(this.backend, new ErrorCounts(), new Acquired.PermitsInFlight()));
		RateLimitRequest request = RateLimitRequest.of(API, "client-" + path);
		assertThat(decide(path, decider, request).allowed()).isTrue();
		for (int i = 0; i < 3; i++) {
			RateLimitDecision denied = decide(path, decider, request);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
		}
		assertThat(this.redis.acquisitions()).as("only the admission asked Redis").isEqualTo(1);
		assertThat(this.cache.hitCount()).isEqualTo(3);
		assertThat(decide(path, decider, RateLimitRequest.of(API, "other-" + path)).allowed()).isTrue();
		assertThat(this.redis.acquisitions()).isEqualTo(2);
	}

	private RateLimitBackend.Acquisition acquire(Path path, RateLimitRequest request, String requestId) {
		return (path == Path.BLOCKING) ? this.backend.acquire(request, requestId).block()
				: this.backend.acquire(request, requestId).block();
	}

	private void giveBack(Path path, RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition) {
		List<RateLimitRequest.Entry> entries = request.entries();
		if (path == Path.BLOCKING) {
			this.backend.release(entries, requestId, acquisition.entryTimesMicros(), acquisition.entrySequences()).block();
		}
		else {
			this.backend.release(entries, requestId, acquisition.entryTimesMicros(), acquisition.entrySequences())
				.block();
		}
	}

	private static RateLimitDecision decide(Path path, Decider decider, RateLimitRequest request) {
		return (path == Path.BLOCKING) ? Waits.await(decider.decide(request)) : decider.decide(request).block();
	}

}
