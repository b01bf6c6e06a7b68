package io.github.ratelimit.it.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Handlers under the {@code /api/**} rule whose response the application's error handling writes: a
 * {@code ResponseStatusException}, an unhandled exception (Spring Boot's {@code /error}) and {@code sendError}.
 */
@RestController
public class FailingController {

	@GetMapping("/api/failing/conflict")
	public String conflict() {
		throw new ResponseStatusException(HttpStatus.CONFLICT, "taken");
	}

	@GetMapping("/api/failing/boom")
	public String boom() {
		throw new IllegalStateException("boom");
	}

	@GetMapping("/api/failing/teapot")
	public void teapot(HttpServletResponse response) throws IOException {
		response.sendError(418);
	}

}
