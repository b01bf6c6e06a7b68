package io.github.ratelimit.test;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A user's application: {@code /api/hello} and {@code /api/orders} limited per client address by filter rules, {@code /keyed/**} per API key,
 * {@code /names/{name}} by an inline {@code @RateLimited} policy keyed by the path variable.
 */
@SpringBootApplication
public class TestApplication {

	public static void main(String[] args) {
		SpringApplication.run(TestApplication.class, args);
	}

	@RestController
	static class Endpoints {

		@GetMapping({ "/api/hello", "/keyed/hello" })
		public String hello() {
			return "hello";
		}

		@GetMapping("/api/orders")
		public String orders() {
			return "[]";
		}

		@GetMapping("/names/{name}")
		@RateLimited(name = "per-name", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "1h",
				key = "#name")
		public String name(@PathVariable String name) {
			return "hello " + name;
		}

	}

}
