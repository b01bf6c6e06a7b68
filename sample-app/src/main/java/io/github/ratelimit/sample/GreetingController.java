package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.autoconfigure.RateLimitPolicies;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Calls the engine directly; the starter's filter and {@code @RateLimited} take this over.
 */
@RestController
class GreetingController {

	private final RateLimiter limiter;

	private final RateLimitPolicies policies;

	GreetingController(RateLimiter limiter, RateLimitPolicies policies) {
		this.limiter = limiter;
		this.policies = policies;
	}

	@GetMapping("/hello")
	ResponseEntity<Map<String, Object>> hello(HttpServletRequest request) {
		RateLimitDecision decision = this.limiter
			.check(RateLimitRequest.of(this.policies.get("per-client"), request.getRemoteAddr()));
		PolicyDecision deciding = decision.deciding().orElseThrow();
		if (!decision.allowed()) {
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.header("Retry-After", Long.toString((decision.retryAfter().toMillis() + 999) / 1000))
				.body(Map.of("error", "rate limited", "policy", deciding.policy().name()));
		}
		return ResponseEntity.ok(Map.of("greeting", "hello", "remaining", deciding.remaining()));
	}

}
