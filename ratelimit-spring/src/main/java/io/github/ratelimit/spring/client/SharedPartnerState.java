package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Partners' limits shared by every instance through Redis, with this instance's own memory behind it: every
 * response is recorded in both, so that when a Redis call fails or outlasts its timeout the local state (already
 * warm) answers, and Redis is left alone for {@link #PAUSE} before it is tried again. An outage therefore costs a
 * call at most the timeout, once per pause, and never stops outgoing calls.
 */
public final class SharedPartnerState implements PartnerState {

	/** How long Redis is not asked after a failure. */
	static final Duration PAUSE = Duration.ofSeconds(1);

	private static final Log logger = LogFactory.getLog(SharedPartnerState.class);

	private final RedisPartnerState redis;

	private final LocalPartnerState local = new LocalPartnerState();

	private volatile long pausedUntil;

	/**
	 * @param factory the connection factory
	 * @param prefix the key prefix ({@code ratelimit.key-prefix})
	 * @param timeout the longest a call waits for Redis before this instance's own state answers
	 */
	public SharedPartnerState(RedisConnectionFactory factory, String prefix, Duration timeout) {
		this.redis = new RedisPartnerState(factory, prefix, timeout);
		this.pausedUntil = System.nanoTime();
	}

	@Override
	public Mono<Duration> reserve(String partner, double paceBelow, Duration budget) {
		return shared((state) -> state.reserve(partner, paceBelow, budget),
				this.local.reserve(partner, paceBelow, budget));
	}

	@Override
	public Mono<Void> learn(String partner, PartnerResponse response) {
		return this.local.learn(partner, response).then(shared((state) -> state.learn(partner, response), Mono.empty()));
	}

	@Override
	public Mono<Map<String, Object>> describe(String partner) {
		return shared((state) -> state.describe(partner), this.local.describe(partner));
	}

	/** Asks Redis unless paused; its failure (or no answer) gives the local answer and pauses it. */
	private <T> Mono<T> shared(Function<PartnerState, Mono<T>> call, Mono<T> fallback) {
		if (System.nanoTime() - this.pausedUntil < 0) {
			return fallback;
		}
		return call.apply(this.redis).onErrorResume((ex) -> {
			this.pausedUntil = System.nanoTime() + PAUSE.toNanos();
			logger.debug("Partner state in Redis unavailable, this instance's own is used for " + PAUSE, ex);
			return fallback;
		}).switchIfEmpty(fallback);
	}

}
