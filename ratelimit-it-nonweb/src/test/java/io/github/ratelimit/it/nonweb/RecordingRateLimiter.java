package io.github.ratelimit.it.nonweb;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import reactor.core.publisher.Mono;

/**
 * The application's real limiter (over Redis), recording every decision with the instant it was taken, so that
 * tests can tell how often a call was checked and in which order.
 */
final class RecordingRateLimiter implements RateLimiter {

	/** A decision and when it was answered ({@link System#nanoTime()}). */
	record Recorded(RateLimitDecision decision, long answeredNanos) {
	}

	final List<Recorded> decisions = new CopyOnWriteArrayList<>();

	private final RateLimiter delegate;

	RecordingRateLimiter(RateLimiter delegate) {
		this.delegate = delegate;
	}

	@Override
	public RateLimitDecision check(RateLimitRequest request) {
		return record(this.delegate.check(request));
	}

	@Override
	public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
		return this.delegate.checkAsync(request).map(this::record);
	}

	private RateLimitDecision record(RateLimitDecision decision) {
		this.decisions.add(new Recorded(decision, System.nanoTime()));
		return decision;
	}

}
