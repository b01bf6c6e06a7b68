package io.github.ratelimit.it.nonweb;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;
import reactor.core.publisher.Mono;

/**
 * A client of a partner's API that allows a few calls across all of the team's instances: the methods stand for the
 * HTTP calls (they record who called them, in order, instead).
 */
public class PartnerClient {

	private final List<String> calls = new CopyOnWriteArrayList<>();

	/**
	 * The calls that ran, in the order they ran (not rate-limited).
	 * @return the calls
	 */
	public List<String> calls() {
		return this.calls;
	}

	/**
	 * Limited to 5 an hour across all instances; a denied call throws at once.
	 * @param id the order
	 * @return the answer
	 */
	@RateLimited("partner")
	public String order(String id) {
		this.calls.add(id);
		return "order " + id;
	}

	/**
	 * One call every 400 ms across all instances; a denied call waits for its turn (up to the policy's 10 s).
	 * @param id the quote
	 * @return the answer
	 */
	@RateLimited("paced")
	public String quote(String id) {
		this.calls.add(id);
		return "quote " + id;
	}

	/**
	 * As {@link #quote}, without blocking.
	 * @param id the quote
	 * @return the answer
	 */
	@RateLimited("paced")
	public Mono<String> quoteReactive(String id) {
		return Mono.fromSupplier(() -> {
			this.calls.add(id);
			return "quote " + id;
		});
	}

	/**
	 * As {@link #quote}, answering a future.
	 * @param id the quote
	 * @return the answer
	 */
	@RateLimited("paced")
	public CompletableFuture<String> quoteAsync(String id) {
		this.calls.add(id);
		return CompletableFuture.completedFuture("quote " + id);
	}

	/**
	 * One an hour: waiting (2 s at most) never helps, so a denied call throws without waiting.
	 * @param id the refund
	 * @return the answer
	 */
	@RateLimited("impatient")
	public String refund(String id) {
		this.calls.add(id);
		return "refund " + id;
	}

	/**
	 * As {@link #quote}, but the annotation says never to wait, over the policy's {@code max-wait}.
	 * @param id the quote
	 * @return the answer
	 */
	@RateLimited(value = "paced", maxWait = "0")
	public String quoteOrFail(String id) {
		this.calls.add(id);
		return "quote " + id;
	}

	/**
	 * Limited per customer (an inline policy whose SpEL key reads the argument), 2 an hour.
	 * @param customer the customer
	 * @return the answer
	 */
	// a sliding window log: a fixed window's boundary (each whole hour) between two calls would refill it
	@RateLimited(name = "per-customer", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "1h",
			key = "#customer")
	public String statement(String customer) {
		this.calls.add(customer);
		return "statement " + customer;
	}

}
