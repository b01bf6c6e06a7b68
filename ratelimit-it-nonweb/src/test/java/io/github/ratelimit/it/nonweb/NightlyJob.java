package io.github.ratelimit.it.nonweb;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;
import reactor.core.publisher.Mono;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * A scheduled job that runs every 20 ms but may do its work only 3 times an hour across all instances; and a method
 * limited per user of the security context.
 */
public class NightlyJob {

	private final AtomicInteger runs = new AtomicInteger();

	/** The scheduled work. */
	@Scheduled(fixedDelay = 20)
	// a sliding window log: a fixed window's boundary (each whole hour) while the scheduler calls would refill it
	@RateLimited(name = "nightly", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 3, window = "1h", key = "global")
	public void run() {
		this.runs.incrementAndGet();
	}

	/**
	 * How often the work ran.
	 * @return the runs
	 */
	public int runs() {
		return this.runs.get();
	}

	/**
	 * Limited per authenticated user: 1 an hour each.
	 * @return the answer
	 */
	// a sliding window log: a fixed window's boundary (each whole hour) between two calls would refill it
	@RateLimited(name = "per-user-report", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 1, window = "1h",
			key = "principal")
	public String report() {
		return "report";
	}

	/**
	 * One quote every 300 ms per authenticated user, waiting for the turn without blocking.
	 * @return the quote
	 */
	@RateLimited("per-user-quote")
	public Mono<String> quote() {
		return Mono.just("quote");
	}

	/**
	 * One quote every 300 ms per tenant, the tenant read by a key resolver from the calling thread; a call waits for
	 * its turn, blocking.
	 * @return the quote
	 */
	@RateLimited("per-tenant-quote")
	public String tenantQuote() {
		return "quote";
	}

}
