package io.github.ratelimit.spring.reactive;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.spring.DecisionScope;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * What the gateway module needs of the WebFlux side for one exchange: its {@link RequestContext}, the permits held
 * until it completes, and a response releasing them before the client sees it end. Public for that module only; not
 * an extension point.
 */
public final class GatewaySupport {

	private final Mono<RequestContext> request;

	private final DecisionScope permits = new DecisionScope();

	/** @param exchange the exchange */
	public GatewaySupport(ServerWebExchange exchange) {
		this.request = ExchangeRequestContext.resolve(exchange).cache();
	}

	/** @return the exchange as a request context, its principal resolved once */
	public Mono<RequestContext> request() {
		return this.request;
	}

	/**
	 * Holds an admitted decision's permit until {@link #release()}; once released, releases it at once instead (a
	 * check still in flight when the client went away).
	 * @return completes once held or released
	 */
	public Mono<Void> hold(Permit permit) {
		return this.permits.hold(permit);
	}

	/** @return whether {@link #release()} ran */
	public boolean isReleased() {
		return this.permits.isClosed();
	}

	/**
	 * Releases every permit held, once. Never fails; a failed release is logged.
	 * @return completes once released
	 */
	public Mono<Void> release() {
		return this.permits.close();
	}

	/**
	 * A response that {@link #release() releases} the permits before the client can see it end.
	 * @return the response to hand down the chain
	 */
	public ServerHttpResponse releasing(ServerHttpResponse response) {
		return ReleasingResponse.of(response, this::release);
	}

}
