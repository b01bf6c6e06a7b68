package io.github.ratelimit.spring.reactive;


import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Turns a {@link RateLimitExceededException} (a {@code @RateLimited} method's denial) into the rejection response:
 * 429, the rate-limit headers of every decision of the exchange and, by default, an RFC 9457 problem body. Other
 * exceptions, and denials that reach it after the response was committed, pass on to the next handler.
 * <p>
 * Ordered at {@code -2}, before Spring Boot's default error handler ({@code -1}). An {@code @ExceptionHandler} for
 * {@code RateLimitExceededException} in the application takes precedence, as controller exception handling runs
 * before web exception handlers.
 */
public final class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** The default order: before Spring Boot's {@code DefaultErrorWebExceptionHandler} ({@code -1}). */
	public static final int DEFAULT_ORDER = -2;

	private final RateLimitResponses responses;

	private final int order;

	/**
	 * A handler at the {@link #DEFAULT_ORDER default order}.
	 * @param responses renders the rejection
	 */
	public RateLimitWebExceptionHandler(RateLimitResponses responses) {
		this(responses, DEFAULT_ORDER);
	}

	/**
	 * A handler.
	 * @param responses renders the rejection
	 * @param order the order among the exception handlers
	 */
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
		Mono<Void> giveBack = (scope != null) ? scope.reverseAdmitted() : Mono.empty();
		return giveBack.then(request(exchange))
			.flatMap((request) -> ExchangeScope.write(exchange, this.responses.reject(denial.decision(), request)));
	}

	private static Mono<RequestContext> request(ServerWebExchange exchange) {
		ExchangeScope scope = exchange.getAttribute(ExchangeScope.KEY);
		if (scope != null) {
			return Mono.just(scope.request());
		}
		return ExchangeRequestContext.resolve(exchange);
	}

}
