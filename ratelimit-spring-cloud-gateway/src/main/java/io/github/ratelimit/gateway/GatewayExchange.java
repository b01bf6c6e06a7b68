package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RequestContext;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.reactive.ExchangeRequestContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * What the gateway's rate limiting knows of one exchange: its request context, the admitted decisions of its
 * {@code RequestRateLimiter} filters (what a later denial gives back), the concurrency permits it holds, and the
 * rejection its response must carry once a filter denied it. Opened by the {@link RateLimitGatewayFilter}, found by
 * the {@link PolicyRateLimiter} in the Reactor context.
 */
final class GatewayExchange {

	private static final Log logger = LogFactory.getLog(GatewayExchange.class);

	/** The Reactor context key under which the state is found. */
	static final String KEY = GatewayExchange.class.getName();

	private final Mono<RequestContext> request;

	private final List<RateLimitDecision> admitted = new ArrayList<>();

	private final List<Permit> permits = new ArrayList<>();

	private @Nullable Rejection rejection;

	private boolean closed;

	GatewayExchange(ServerWebExchange exchange) {
		this.request = ExchangeRequestContext.resolve(exchange).cache();
	}

	/**
	 * The request context, its principal resolved once.
	 * @return the context
	 */
	Mono<RequestContext> request() {
		return this.request;
	}

	/**
	 * Records an admitted decision; once the exchange is closed (the client went away while it was made), releases
	 * its permit instead.
	 * @param decision the admitted decision
	 * @return completes once recorded or released
	 */
	Mono<Void> admitted(RateLimitDecision decision) {
		synchronized (this) {
			if (!this.closed) {
				this.admitted.add(decision);
				if (decision.permit().holdsAny()) {
					this.permits.add(decision.permit());
				}
				return Mono.empty();
			}
		}
		return release(decision.permit().releaseAsync(), "release a rate-limit permit");
	}

	/**
	 * Records the denial the response must carry, and gives back what the exchange's earlier admitted decisions
	 * took (another {@code RequestRateLimiter} filter of the same route).
	 * @param rejection the response to the denial
	 * @return completes once given back
	 */
	Mono<Void> denied(Rejection rejection) {
		List<RateLimitDecision> earlier;
		synchronized (this) {
			this.rejection = rejection;
			earlier = new ArrayList<>(this.admitted);
			this.admitted.clear();
		}
		return Flux.fromIterable(earlier)
			.flatMap((decision) -> release(decision.reversal().releaseAsync(), "give back the quota of a denied request"))
			.then();
	}

	/**
	 * The rejection recorded for the exchange.
	 * @return the rejection, or null while no filter denied it
	 */
	synchronized @Nullable Rejection rejection() {
		return this.rejection;
	}

	/**
	 * Releases every permit held; later admitted decisions release theirs at once. Never fails.
	 * @return completes once released
	 */
	Mono<Void> close() {
		List<Permit> held;
		synchronized (this) {
			if (this.closed) {
				return Mono.empty();
			}
			this.closed = true;
			held = new ArrayList<>(this.permits);
			this.permits.clear();
		}
		return Flux.fromIterable(held).flatMap((permit) -> release(permit.releaseAsync(), "release a rate-limit permit")).then();
	}

	private static Mono<Void> release(Mono<Void> release, String what) {
		return release.onErrorResume((ex) -> {
			logger.warn("Could not " + what + "; the policy's window reclaims it", ex);
			return Mono.empty();
		});
	}

}
