package io.github.ratelimit.it.webflux;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A service of the WebFlux application whose {@code @RateLimited} methods are called by a controller without an
 * annotation of its own, and by the tests outside any exchange.
 */
@Service
public class PartnerService {

	private final AtomicInteger quotes = new AtomicInteger();

	/**
	 * One quote every 300 ms per tenant: a subscription that comes too early is delayed until its turn, no thread
	 * blocked.
	 * @param tenant the tenant
	 * @return the quote
	 */
	@RateLimited(name = "partner-quote", algorithm = Algorithm.GCRA, limit = 1, window = "300ms", key = "#tenant",
			maxWait = "20s")
	public Mono<String> quote(String tenant) {
		return Mono.fromSupplier(() -> {
			this.quotes.incrementAndGet();
			return "quote " + tenant;
		});
	}

	/**
	 * Two an hour for everybody, blocking: allowed on a service of a WebFlux application (not on a controller).
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

		@GetMapping("/partner/quote/{tenant}")
		Mono<String> quote(@PathVariable String tenant) {
			return this.partner.quote(tenant);
		}

	}

}
