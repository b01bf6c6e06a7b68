package io.github.ratelimit.autoconfigure.client;

import java.time.Duration;

import io.github.ratelimit.spring.client.PartnerCallListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The partners' meters, tagged by partner: {@code ratelimit.client.waits} (a timer: calls that waited for their turn
 * before they were sent, and how long), {@code ratelimit.client.retries} (refused calls sent again, by status) and
 * {@code ratelimit.client.refusals} (calls failed with {@code PartnerRateLimitedException}).
 */
final class PartnerCallMeters implements PartnerCallListener {

	private final MeterRegistry registry;

	PartnerCallMeters(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void waited(String partner, Duration wait) {
		Timer.builder("ratelimit.client.waits")
			.description("Calls to a rate-limited partner that waited for their turn before they were sent")
			.tag("partner", partner)
			.register(this.registry)
			.record(wait);
	}

	@Override
	public void retried(String partner, int status) {
		Counter.builder("ratelimit.client.retries")
			.description("Calls a rate-limited partner refused that were sent again")
			.tag("partner", partner)
			.tag("status", Integer.toString(status))
			.register(this.registry)
			.increment();
	}

	@Override
	public void refused(String partner) {
		Counter.builder("ratelimit.client.refusals")
			.description("Calls to a rate-limited partner failed with PartnerRateLimitedException")
			.tag("partner", partner)
			.register(this.registry)
			.increment();
	}

}
