package io.github.ratelimit.spring.reactive;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.DecisionScope;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

/** The {@link DecisionScope} of one exchange, under one exchange attribute and in the chain's Reactor context. */
final class ExchangeScope extends DecisionScope {

	/** Reactor context key and exchange attribute under which the scope is found. */
	static final String KEY = ExchangeScope.class.getName();

	private final ServerWebExchange exchange;

	private final RequestContext request;

	private final boolean filterOwned;

	private ExchangeScope(ServerWebExchange exchange, RequestContext request, boolean filterOwned) {
		this.exchange = exchange;
		this.request = request;
		this.filterOwned = filterOwned;
	}

	/** Opens the scope of an exchange the {@link RateLimitWebFilter} handles; the filter closes it. */
	static ExchangeScope open(ServerWebExchange exchange, RequestContext request) {
		ExchangeScope scope = new ExchangeScope(exchange, request, true);
		exchange.getAttributes().put(KEY, scope);
		return scope;
	}

	/** Whether a subscription runs within an exchange: {@link #current} finds it. */
	static boolean isPresent(ContextView context) {
		return context.hasKey(KEY) || ServerWebExchangeContextFilter.getExchange(context).isPresent();
	}

	/**
	 * The scope of the exchange a subscription runs for: the filter's, else one made from the exchange Spring's
	 * {@link ServerWebExchangeContextFilter} put into the context (no filter closes it: the caller releases).
	 */
	static Mono<ExchangeScope> current(ContextView context) {
		ExchangeScope scope = context.getOrDefault(KEY, null);
		if (scope != null) {
			return Mono.just(scope);
		}
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return Mono.error(new IllegalStateException("No WebFlux exchange in the Reactor context: a @RateLimited "
					+ "method returning Mono, Flux or Publisher must be subscribed to within a request that went "
					+ "through the RateLimitWebFilter (ratelimit.filter.enabled=true) or Spring's "
					+ "ServerWebExchangeContextFilter"));
		}
		ExchangeScope existing = exchange.getAttribute(KEY);
		if (existing != null) {
			return Mono.just(existing);
		}
		return ExchangeRequestContext.resolve(exchange).map((request) -> {
			ExchangeScope opened = new ExchangeScope(exchange, request, false);
			// another subscription may have got there first: the exchange keeps one scope
			return (exchange.getAttributes().putIfAbsent(KEY, opened) instanceof ExchangeScope first) ? first : opened;
		});
	}

	ServerWebExchange exchange() {
		return this.exchange;
	}

	RequestContext request() {
		return this.request;
	}

	/** Whether the filter releases the permits recorded here when the exchange completes. */
	boolean isFilterOwned() {
		return this.filterOwned;
	}

	/** Sets the rate-limit headers of an admitted decision, replacing earlier values, unless already committed. */
	void setHeaders(RateLimitResponses responses, RateLimitDecision admitted) {
		ServerHttpResponse response = this.exchange.getResponse();
		if (response.isCommitted()) {
			return;
		}
		// values computed first (a partition key's HMAC among them), then set in one short run: the response may be
		// committed on the exchange's event loop meanwhile, and should not get some headers and not others
		List<String> pairs = new ArrayList<>(16);
		responses.writeHeaders(admitted, (name, value) -> {
			pairs.add(name);
			pairs.add(value);
		});
		try {
			if (response.isCommitted()) {
				return;
			}
			HttpHeaders headers = response.getHeaders();
			for (int i = 0; i < pairs.size(); i += 2) {
				headers.set(pairs.get(i), pairs.get(i + 1));
			}
		}
		catch (UnsupportedOperationException ex) {
			// committed meanwhile: the headers are read-only now
		}
	}

	static Mono<Void> write(ServerWebExchange exchange, Rejection rejection) {
		ServerHttpResponse response = exchange.getResponse();
		if (!response.setStatusCode(HttpStatusCode.valueOf(rejection.status()))) {
			return Mono.error(new IllegalStateException("The response is already committed"));
		}
		HttpHeaders headers = response.getHeaders();
		headers.clearContentHeaders();
		headers.putAll(rejection.headers());
		if (rejection.body().length == 0) {
			return response.setComplete();
		}
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(rejection.body())));
	}

}
