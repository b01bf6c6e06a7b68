package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import reactor.core.publisher.Mono;

/** What this instance alone knows of its partners, in memory: the state without Redis, and the one Redis falls back to. */
public final class LocalPartnerState implements PartnerState {

	private final Map<String, PartnerBook> books = new ConcurrentHashMap<>();

	private final LongSupplier clock;

	public LocalPartnerState() {
		this(System::currentTimeMillis);
	}

	LocalPartnerState(LongSupplier clock) {
		this.clock = clock;
	}

	@Override
	public Mono<Duration> reserve(String partner, double paceBelow, Duration budget) {
		return Mono.fromSupplier(() -> Duration.ofMillis(reserveNow(partner, paceBelow, budget.toMillis())));
	}

	long reserveNow(String partner, double paceBelow, long budgetMillis) {
		PartnerBook book = book(partner);
		synchronized (book) {
			return book.reserve(this.clock.getAsLong(), paceBelow, budgetMillis);
		}
	}

	@Override
	public Mono<Void> learn(String partner, PartnerResponse response) {
		return Mono.fromRunnable(() -> learnNow(partner, response));
	}

	void learnNow(String partner, PartnerResponse response) {
		PartnerBook book = book(partner);
		synchronized (book) {
			book.learn(this.clock.getAsLong(), response);
		}
	}

	@Override
	public Mono<Map<String, Object>> describe(String partner) {
		return Mono.fromSupplier(() -> {
			PartnerBook book = book(partner);
			synchronized (book) {
				return book.describe(this.clock.getAsLong());
			}
		});
	}

	private PartnerBook book(String partner) {
		return this.books.computeIfAbsent(partner, (name) -> new PartnerBook());
	}

}
