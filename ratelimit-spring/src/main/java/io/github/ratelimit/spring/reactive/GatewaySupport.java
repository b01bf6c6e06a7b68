package io.github.ratelimit.spring.reactive;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.spring.DecisionScope;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/** What the gateway module needs of one exchange: its {@link RequestContext} and the permits held until it ends. */
public final class GatewaySupport {

	private final Mono<RequestContext> request;

	private final DecisionScope permits = new DecisionScope();

	public GatewaySupport(ServerWebExchange exchange) {
		this.request = ExchangeRequestContext.resolve(exchange).cache();
	}

	/** The exchange as a request context, its principal resolved once. */
	public Mono<RequestContext> request() {
		return this.request;
	}

	/** Holds a permit until {@link #release()} (after it, releases it at once); completes once held or released. */
	public Mono<Void> hold(Permit permit) {
		return this.permits.hold(permit);
	}

	/** Whether {@link #release()} ran. */
	public boolean isReleased() {
		return this.permits.isClosed();
	}

	/** Releases every permit held, once; never fails (a failed release is logged). */
	public Mono<Void> release() {
		return this.permits.close();
	}

	/** A response for the chain that {@link #release() releases} the permits before the client sees it end. */
	public ServerHttpResponse releasing(ServerHttpResponse response) {
		return ReleasingResponse.of(response, this::release);
	}

}
