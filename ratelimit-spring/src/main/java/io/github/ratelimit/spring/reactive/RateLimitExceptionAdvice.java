package io.github.ratelimit.spring.reactive;

import io.github.ratelimit.spring.RateLimitExceededException;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ServerWebExchange;

/**
 * Answers a {@code @RateLimited} handler's denial through the {@link RateLimitWebExceptionHandler} ahead of the
 * application's own advice (a catch-all {@code @ExceptionHandler} would answer it); a controller's own runs first.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class RateLimitExceptionAdvice {

	private final RateLimitWebExceptionHandler handler;

	public RateLimitExceptionAdvice(RateLimitWebExceptionHandler handler) {
		this.handler = handler;
	}

	/** Writes a denial's rejection; completes once it is written. */
	@ExceptionHandler(RateLimitExceededException.class)
	public Mono<Void> rateLimitExceeded(RateLimitExceededException denial, ServerWebExchange exchange) {
		return this.handler.handle(exchange, denial);
	}

}
