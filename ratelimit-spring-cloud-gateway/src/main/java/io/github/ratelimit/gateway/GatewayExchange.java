package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.reactive.GatewaySupport;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * What the gateway's rate limiting knows of one exchange, in its Reactor context: the admitted decisions (what a
 * later denial gives back) and the rejection once a filter denied it, beside its {@link #support()} (the request
 * context and the permits held until the response ends).
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

	GatewaySupport support() {
		return this.support;
	}

	/** Records an admitted decision; once closed (the client left meanwhile), releases its permit instead. */
	Mono<Void> admitted(RateLimitDecision decision) {
		synchronized (this) {
			if (!this.support.isReleased()) {
				this.admitted.add(decision);
			}
		}
		return this.support.hold(decision.permit());
	}

	/** Records the rejection the response must carry, and gives back what earlier admitted decisions took. */
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

	/** The rejection recorded, or null while no filter denied the exchange. */
	synchronized @Nullable Rejection rejection() {
		return this.rejection;
	}

}
