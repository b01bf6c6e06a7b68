package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Endpoints limited by the starter: {@code /hello} by a filter rule, {@code /greet/{name}} also by an annotation
 * whose key is the path variable.
 */
@RestController
class GreetingController {

	@GetMapping("/hello")
	Map<String, String> hello() {
		return Map.of("greeting", "hello");
	}

	@GetMapping("/greet/{name}")
	@RateLimited(name = "per-name", algorithm = "sliding-window-log", limit = 2, window = "30s", key = "#name")
	Map<String, String> greet(@PathVariable String name) {
		return Map.of("greeting", "hello " + name);
	}

}
