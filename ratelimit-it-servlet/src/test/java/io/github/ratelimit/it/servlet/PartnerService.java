package io.github.ratelimit.it.servlet;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;

import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A service whose {@code @RateLimited} methods are called by a controller without an annotation of its own, and by
 * the tests outside any request.
 */
@Service
public class PartnerService {

	private final AtomicInteger quotes = new AtomicInteger();

	/**
	 * One quote every 300 ms per client: a call in a request that comes too early waits for its turn.
	 * @param sku the article
	 * @return the quote
	 */
	@RateLimited(name = "partner-quote", algorithm = Algorithm.GCRA, limit = 1, window = "300ms", key = "ip",
			maxWait = "20s")
	public String quote(String sku) {
		this.quotes.incrementAndGet();
		return "quote " + sku;
	}

	/**
	 * Two an hour for everybody; denials throw at once.
	 * @return the answer
	 */
	// a sliding window log: a fixed window's boundary (each whole hour) between two calls would refill it
	@RateLimited(name = "partner-batch", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "1h",
			key = "global")
	public String batch() {
		return "batch";
	}

	/**
	 * How many quotes ran.
	 * @return the count
	 */
	public int quotes() {
		return this.quotes.get();
	}

	/** Calls the service; not rate-limited itself. */
	@RestController
	static class PartnerController {

		private final PartnerService partner;

		PartnerController(PartnerService partner) {
			this.partner = partner;
		}

		@GetMapping("/partner/quote/{sku}")
		String quote(@PathVariable String sku) {
			return this.partner.quote(sku);
		}

		@GetMapping("/partner/batch")
		String batch() {
			return this.partner.batch();
		}

	}

}
