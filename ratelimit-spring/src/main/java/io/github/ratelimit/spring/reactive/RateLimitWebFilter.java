package io.github.ratelimit.spring.reactive;

import java.util.List;

import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
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
 * Checks the filter rules' policies of each WebFlux exchange (admitted: the headers; denied: the rejection), runs the
 * chain with the exchange's {@link ExchangeScope} in its Reactor context, and releases every permit the exchange
 * holds before its response ends (on error and cancellation too).
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	private final int order;

	/** A filter at the {@link RateLimitFilter#DEFAULT_ORDER default order} of both filters (a compiled-in constant). */
	public RateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
		this(enforcer, responses, RateLimitFilter.DEFAULT_ORDER);
	}

	/** A filter at an order of the application's among the web filters. */
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
		List<RateLimitEnforcer.Target> targets = this.enforcer.ruleTargets(request.method(),
				exchange.getRequest().getPath().pathWithinApplication());
		if (targets.isEmpty()) {
			return proceed;
		}
		return scope
			.admit(this.enforcer, request, targets, null, null,
					(admitted) -> scope.setHeaders(this.responses, admitted))
			.onErrorResume(RateLimitExceededException.class, (denial) -> ExchangeScope
				.write(exchange, this.responses.reject(denial.decision(), request))
				.then(Mono.empty()))
			.flatMap((decision) -> proceed);
	}

}
