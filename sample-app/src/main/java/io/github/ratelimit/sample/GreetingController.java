package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /hello} is limited per client address by a filter rule ({@code per-client} in {@code application.yml});
 * {@code /greet/{name}} by an annotation whose SpEL key is the path variable: two greetings of one name per
 * 30 seconds, whoever asks.
 */
@RestController
public class GreetingController {

	@GetMapping("/hello")
	public Map<String, String> hello() {
		return Map.of("greeting", "hello");
	}

	@GetMapping("/greet/{name}")
	@RateLimited(name = "per-name", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "30s", key = "#name")
	public Map<String, String> greet(@PathVariable String name) {
		return Map.of("greeting", "hello " + name);
	}

}
