package io.github.ratelimit.spring.reactive;

import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Turns a {@link RateLimitExceededException} into the rejection, giving back what the exchange's admitted decisions
 * took; other exceptions, and denials after the response was committed, pass on.
 */
public final class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** The default order: before Spring Boot's {@code DefaultErrorWebExceptionHandler} ({@code -1}). */
	public static final int DEFAULT_ORDER = -2;

	private final RateLimitResponses responses;

	private final int order;

	/** A handler at the {@link #DEFAULT_ORDER default order}. */
	public RateLimitWebExceptionHandler(RateLimitResponses responses) {
		this(responses, DEFAULT_ORDER);
	}

	/** A handler at an order of the application's among the exception handlers. */
	public RateLimitWebExceptionHandler(RateLimitResponses responses, int order) {
		this.responses = responses;
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		RateLimitExceededException denial = RateLimitExceededException.findIn(ex);
		if (denial == null || exchange.getResponse().isCommitted()) {
			return Mono.error(ex);
		}
		ExchangeScope scope = exchange.getAttribute(ExchangeScope.KEY);
		Mono<RequestContext> request = (scope != null) ? scope.reverseAdmitted().thenReturn(scope.request())
				: ExchangeRequestContext.resolve(exchange);
		return request
			.flatMap((context) -> ExchangeScope.write(exchange, this.responses.reject(denial.decision(), context)));
	}

}
