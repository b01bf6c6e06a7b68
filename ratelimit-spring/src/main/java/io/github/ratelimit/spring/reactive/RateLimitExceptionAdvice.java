package io.github.ratelimit.spring.reactive;

import io.github.ratelimit.spring.RateLimitExceededException;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ServerWebExchange;

/**
 * Answers a {@code @RateLimited} handler's denial in WebFlux's controller exception handling, ahead of the
 * application's own advice: ordered first, so a catch-all {@code @ExceptionHandler(Exception.class)} in a
 * {@code @ControllerAdvice} does not turn the 429 into its own answer (Spring MVC gets the same from the
 * {@code RateLimitExceptionResolver}). It renders through the {@link RateLimitWebExceptionHandler}, so the response
 * is the same as when the denial reaches the web exception handlers. An {@code @ExceptionHandler} declared in the
 * controller itself still runs first, as WebFlux looks there before any advice; a denial it does not answer still
 * reaches the {@link RateLimitWebExceptionHandler}.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class RateLimitExceptionAdvice {

	private final RateLimitWebExceptionHandler handler;

	/**
	 * An advice.
	 * @param handler renders the rejection
	 */
	public RateLimitExceptionAdvice(RateLimitWebExceptionHandler handler) {
		this.handler = handler;
	}

	/**
	 * Writes the rejection of a denial.
	 * @param denial the denial
	 * @param exchange the exchange
	 * @return completes when the rejection is written
	 */
	@ExceptionHandler(RateLimitExceededException.class)
	public Mono<Void> rateLimitExceeded(RateLimitExceededException denial, ServerWebExchange exchange) {
		return this.handler.handle(exchange, denial);
	}

}
