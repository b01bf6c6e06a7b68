package io.github.ratelimit.it.servlet;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * An application's catch-all exception handler, as many have: it must not swallow rate-limit denials. It covers
 * {@link DemoController} only, so that exceptions of {@link InFlightController} leave the dispatcher servlet and
 * travel up through the filter.
 */
@RestControllerAdvice(assignableTypes = DemoController.class)
public class CatchAllAdvice {

	@ExceptionHandler(Exception.class)
	public ResponseEntity<String> handle(Exception ex) {
		return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("handled " + ex.getClass().getSimpleName());
	}

}
