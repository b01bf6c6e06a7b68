package io.github.ratelimit.benchmarks;

import java.util.concurrent.CompletionStage;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.TopDenials;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * This project's engine, on the Redis or the local backend, with one algorithm. A concurrency decision releases
 * its permit right away (acquire + release is what a request costs), which is a second round trip. With a
 * {@link TopDenials}, every decision is recorded into it as the enforcer's consumer of decisions does
 * ({@code TopDenials.record(RateLimitDecision)}, blocking after the check, non-blocking in {@code doOnNext}).
 */
final class EngineContender implements Contender {

	private final String name;

	private final RateLimiter limiter;

	private final RateLimitRequest[] requests = new RateLimitRequest[Scenario.IDENTITIES];

	/** Where every decision is recorded, or null (the summaries off). */
	private final @Nullable TopDenials top;

	EngineContender(String name, RateLimitBackend backend, Algorithm algorithm, Scenario scenario) {
		this(name, backend, algorithm, scenario, null);
	}

	EngineContender(String name, RateLimitBackend backend, Algorithm algorithm, Scenario scenario,
			@Nullable TopDenials top) {
		this.name = name;
		this.limiter = new DefaultRateLimiter(backend);
		this.top = top;
		// the algorithms that keep one entry per request accept at most 100,000: at about 5 requests per second per
		// identity that is still never reached within the one-minute window
		long openLimit = (algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.CONCURRENCY)
				? RateLimitPolicy.MAX_ENTRY_LIMIT : Scenario.OPEN_LIMIT;
		RateLimitPolicy open = RateLimitPolicy.builder("open-" + algorithm.code())
			.algorithm(algorithm)
			.limit(openLimit)
			.window(Scenario.OPEN_WINDOW)
			.build();
		RateLimitPolicy closed = RateLimitPolicy.builder("closed-" + algorithm.code())
			.algorithm(algorithm)
			.limit(Scenario.CLOSED_LIMIT)
			.window(Scenario.CLOSED_WINDOW)
			.build();
		for (int i = 0; i < Scenario.IDENTITIES; i++) {
			this.requests[i] = RateLimitRequest.of(scenario.closed(i) ? closed : open, scenario.key(i));
			if (scenario.closed(i)) {
				this.limiter.check(this.requests[i]); // use up the closed identity's single request
			}
		}
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public boolean acquire(int identity) {
		RateLimitDecision decision = this.limiter.check(this.requests[identity]);
		if (this.top != null) {
			this.top.record(decision);
		}
		decision.permit().release();
		return decision.allowed();
	}

	@Override
	public CompletionStage<Boolean> acquireAsync(int identity) {
		Mono<RateLimitDecision> checked = this.limiter.checkAsync(this.requests[identity]);
		if (this.top != null) {
			checked = checked.doOnNext(this.top::record);
		}
		return checked.flatMap((decision) -> decision.permit().releaseAsync().thenReturn(decision.allowed()))
			.toFuture();
	}

}
