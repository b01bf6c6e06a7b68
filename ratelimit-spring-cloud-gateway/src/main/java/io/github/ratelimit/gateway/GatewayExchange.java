package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RequestContext;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.reactive.GatewaySupport;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpResponse;
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

	private final List<RateLimitDecision> admitted = new ArrayList<>();

	private final GatewaySupport support;

	private @Nullable Rejection rejection;

	GatewayExchange(ServerWebExchange exchange) {
		this.support = new GatewaySupport(exchange);
	}

	/**
	 * The request context, its principal resolved once.
	 * @return the context
	 */
	Mono<RequestContext> request() {
		return this.support.request();
	}

	/**
	 * Records an admitted decision; once the exchange is closed (the client went away while it was made), releases
	 * its permit instead.
	 * @param decision the admitted decision
	 * @return completes once recorded or released
	 */
	Mono<Void> admitted(RateLimitDecision decision) {
		synchronized (this) {
			if (!this.support.isReleased()) {
				this.admitted.add(decision);
			}
		}
		return this.support.hold(decision.permit());
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
			.flatMap((decision) -> decision.reversal().releaseAsync().onErrorResume((ex) -> {
				logger.warn("Could not give back what a request denied by a later filter took", ex);
				return Mono.empty();
			}))
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
		return this.support.release();
	}

	/**
	 * A response that releases the permits held before the client can see it end.
	 * @param response the response
	 * @return the response to hand down the chain
	 */
	ServerHttpResponse releasing(ServerHttpResponse response) {
		return this.support.releasing(response);
	}

}
