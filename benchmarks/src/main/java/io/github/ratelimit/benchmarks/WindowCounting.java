package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.LeasingBackend;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The observer of the leased-quotas section: the application's limiter over a backend layer that counts every
 * admission in the one-second window of the Redis clock it was decided at (the acquisition's time: Redis' for an
 * exact decision; for a decision from a slice, the Redis time of the slice's take plus what elapsed here since, which
 * lies in the slice's window). Both applications of a run share the counts (one JVM). Not component-scanned: the
 * section adds it to the applications it starts.
 */
@Configuration(proxyBeanMethods = false)
public class WindowCounting {

	/** Admissions by window (seconds since the epoch on the Redis clock). */
	static final Map<Long, LongAdder> ADMITTED = new ConcurrentHashMap<>();

	@Bean
	RateLimiter rateLimiter(RateLimitBackend backend,
			@Qualifier("rateLimitLeasingBackend") ObjectProvider<LeasingBackend> leasing) {
		LeasingBackend leased = leasing.getIfAvailable();
		RateLimitBackend counted = new Counted((leased != null) ? leased : backend);
		return DefaultRateLimiter.builder(counted).timeout(Duration.ofMillis(50)).build();
	}

	/** Counts admitted single-entry requests by the window of their acquisition's time. */
	private record Counted(RateLimitBackend backend) implements RateLimitBackend {

		@Override
		public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
			return this.backend.acquire(request, requestId).doOnNext(Counted::count);
		}

		/** A leased spend decided on the request thread is counted as any admission. */
		@Override
		public @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
			Acquisition acquisition = this.backend.acquireAtOnce(request, requestId);
			if (acquisition != null) {
				count(acquisition);
			}
			return acquisition;
		}

		@Override
		public boolean answersAtOnce(RateLimitRequest request) {
			return this.backend.answersAtOnce(request);
		}

		@Override
		public Mono<Void> probe(RateLimitRequest request) {
			return this.backend.probe(request);
		}

		private static void count(Acquisition acquisition) {
			if (acquisition.decisions().get(0).allowed()) {
				ADMITTED.computeIfAbsent(acquisition.timeMicros() / 1_000_000, (w) -> new LongAdder()).increment();
			}
		}

		/**
		 * An admission undone (an answer after the budget to a request the failure mode refused) no longer counts:
		 * the exact backend gives it back to its window. A leased one stays spent, and counted.
		 */
		@Override
		public Mono<Void> release(List<RateLimitRequest.Entry> entries, String requestId, List<Long> acquiredAtMicros,
				List<Long> sequences) {
			if (!(this.backend instanceof LeasingBackend)) {
				acquiredAtMicros.forEach((micros) -> ADMITTED.computeIfAbsent(micros / 1_000_000, (w) -> new LongAdder())
					.decrement());
			}
			return this.backend.release(entries, requestId, acquiredAtMicros, sequences);
		}

		@Override
		public String kind() {
			return this.backend.kind();
		}

	}

}
