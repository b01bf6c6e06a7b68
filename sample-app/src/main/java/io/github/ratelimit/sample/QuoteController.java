package io.github.ratelimit.sample;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /api/quote} is limited per API key ({@code per-api-key}: the {@code X-Api-Key} header, a request without
 * one is refused), with more for the {@code pro} tier ({@link ApiKeyTiers}) and an override for one enterprise key.
 */
@RestController
public class QuoteController {

	@GetMapping("/api/quote")
	public Map<String, String> quote() {
		return Map.of("quote", "Make it work, make it right, make it fast.");
	}

}
