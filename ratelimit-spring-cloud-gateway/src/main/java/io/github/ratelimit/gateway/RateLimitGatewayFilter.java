package io.github.ratelimit.gateway;

import io.github.ratelimit.spring.Rejection;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * The gateway-wide half of the {@link PolicyRateLimiter}, ahead of every route filter: keeps the exchange's
 * {@link GatewayExchange}, turns the filter's bare denial into the starter's rejection, and releases the permits
 * before the proxied response ends (or when the exchange fails or is cancelled).
 */
final class RateLimitGatewayFilter implements GlobalFilter, Ordered {

	@Override
	public int getOrder() {
		// before the gateway's own global filters and every route filter
		return Ordered.HIGHEST_PRECEDENCE + 100;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		GatewayExchange state = new GatewayExchange(exchange);
		// the permits are released before the client can see the response end
		ServerHttpResponse response = state.support().releasing(new RejectingResponse(exchange.getResponse(), state));
		return chain.filter(exchange.mutate().response(response).build())
			.contextWrite((context) -> context.put(GatewayExchange.KEY, state))
			.doFinally((signal) -> state.support().release().subscribe());
	}

	/** Completes a response denied by the limiter with the rejection instead of an empty body. */
	private static final class RejectingResponse extends ServerHttpResponseDecorator {

		private final GatewayExchange state;

		RejectingResponse(ServerHttpResponse delegate, GatewayExchange state) {
			super(delegate);
			this.state = state;
		}

		@Override
		public Mono<Void> setComplete() {
			Rejection rejection = this.state.rejection();
			if (rejection == null || isCommitted()) {
				return super.setComplete();
			}
			ServerHttpResponse response = getDelegate();
			response.setStatusCode(HttpStatusCode.valueOf(rejection.status()));
			HttpHeaders headers = response.getHeaders();
			rejection.headers().forEach(headers::put);
			byte[] body = rejection.body();
			return (body.length == 0) ? super.setComplete()
					: response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
		}

	}

}
