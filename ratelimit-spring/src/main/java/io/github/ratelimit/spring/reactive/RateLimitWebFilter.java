package io.github.ratelimit.spring.reactive;

import java.util.List;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RequestContext;
import io.github.ratelimit.spring.servlet.RateLimitFilter;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Applies the filter rules ({@code ratelimit.filter.rules}) to WebFlux requests, without blocking.
 * <p>
 * For every exchange it resolves the principal ({@code ServerWebExchange#getPrincipal()}, absent when
 * unauthenticated), then checks the policies of the rules matching the request's method and path within the
 * application. An admitted request gets the rate-limit headers and goes on down the chain; a denied one gets the
 * rejection (429 and an RFC 9457 body by default) and never reaches the handler. The client address is the
 * exchange's remote address only: forwarded headers count only as far as Spring's forwarded-header handling
 * ({@code server.forward-headers-strategy}) trusts them.
 * <p>
 * The rest of the chain runs with the exchange's {@link ExchangeScope} in its Reactor context, so that
 * {@code @RateLimited} reactive methods ({@code ReactiveRateLimitInterceptor}) add their decisions to the same
 * request. When the exchange completes, fails or is cancelled (the client went away), every concurrency permit it
 * holds (its own and its methods') is released, asynchronously. A response that completes normally
 * releases them before its last bytes are sent ({@code ReleasingResponse}), so a client never finds its own
 * finished request still holding a permit.
 * <p>
 * The default order, {@code -90}, runs it just after Spring Security's {@code WebFilterChainProxy} ({@code -100}),
 * so that principal keys work.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	private final int order;

	/**
	 * A filter at the {@link RateLimitFilter#DEFAULT_ORDER default order} of both filters (a constant, compiled
	 * in: the servlet API need not be present).
	 * @param enforcer decides requests
	 * @param responses renders the headers and rejections
	 */
	public RateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
		this(enforcer, responses, RateLimitFilter.DEFAULT_ORDER);
	}

	/**
	 * A filter.
	 * @param enforcer decides requests
	 * @param responses renders the headers and rejections
	 * @param order the order among the web filters
	 */
	public RateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses, int order) {
		this.enforcer = enforcer;
		this.responses = responses;
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (CorsUtils.isPreFlightRequest(exchange.getRequest())) {
			return chain.filter(exchange); // a browser's CORS preflight is not the client's request: no quota
		}
		return ExchangeRequestContext.resolve(exchange)
			.flatMap((request) -> Mono.usingWhen(Mono.fromSupplier(() -> ExchangeScope.open(exchange, request)),
					(scope) -> apply(scope, chain), ExchangeScope::close, (scope, error) -> scope.close(),
					ExchangeScope::close));
	}

	private Mono<Void> apply(ExchangeScope scope, WebFilterChain chain) {
		RequestContext request = scope.request();
		ServerWebExchange exchange = scope.exchange();
		ServerWebExchange releasing = exchange.mutate()
			.response(ReleasingResponse.of(exchange.getResponse(), scope::close))
			.build();
		Mono<Void> proceed = Mono.defer(() -> chain.filter(releasing))
			.contextWrite((context) -> context.put(ExchangeScope.KEY, scope));
		List<RateLimitEnforcer.Target> targets = this.enforcer.ruleTargets(request.method(), request.path());
		if (targets.isEmpty()) {
			return proceed;
		}
		return scope.check(this.enforcer, targets, null, null).flatMap((decision) -> {
			if (decision.allowed()) {
				scope.setHeaders(this.responses.headers(decision));
				return proceed;
			}
			return ExchangeScope.write(scope.exchange(), this.responses.reject(decision, request));
		});
	}

}
