package io.github.ratelimit.it.servlet;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Handlers behind filter rules ({@code /api/**}, {@code /quick}, {@code /shared/**}, {@code /combo/**},
 * {@code /keys/*}) and {@code @RateLimited} methods.
 */
@RestController
public class DemoController {

	@GetMapping({ "/api/hello", "/quick", "/shared/hello", "/keys/shared", "/keys/skip", "/keys/deny", "/open",
			"/outage/open", "/outage/closed", "/outage/local" })
	public String hello() {
		return "hello";
	}

	@GetMapping("/orders/{id}")
	@RateLimited(value = "per-order", key = "#id")
	public String order(@PathVariable String id) {
		return "order " + id;
	}

	/** Names the per-client policy (keyed by ip) with a key the client sets: counted apart from the ip key. */
	@GetMapping("/mimic")
	@RateLimited(value = "per-client", key = "header:X-Client")
	public String mimic() {
		return "mimic";
	}

	@GetMapping("/search")
	@RateLimited(value = "per-query", key = "#q.toLowerCase()")
	public String search(@RequestParam String q) {
		return "results for " + q;
	}

	@GetMapping("/combo/limited")
	@RateLimited("combo-method")
	public String comboLimited() {
		return "limited";
	}

	@GetMapping("/combo/free")
	public String comboFree() {
		return "free";
	}

	@GetMapping("/shadow/rule")
	public String shadowRule() {
		return "rule";
	}

	@GetMapping("/shadow/method/{id}")
	// a sliding window log: a fixed window's boundary (each whole hour) between two requests would refill it
	@RateLimited(name = "trial-inline", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 1, window = "1h",
			key = "#id", shadow = true)
	public String shadowMethod(@PathVariable String id) {
		return "method " + id;
	}

	@GetMapping("/boom")
	public String boom() {
		throw new IllegalStateException("boom");
	}

}
