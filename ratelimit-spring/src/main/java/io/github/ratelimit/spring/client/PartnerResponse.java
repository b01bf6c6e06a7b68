package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What one response of a partner said of its limits.
 *
 * @param status the response's status code
 * @param quotas the quotas it reported (none when it sent no rate-limit fields)
 * @param retryAfter its {@code Retry-After} on a 429 or 503, or null
 */
public record PartnerResponse(int status, List<PartnerQuota> quotas, @Nullable Duration retryAfter) {

	/** @return whether the partner refused the call for its limits or load (429, 503) */
	public boolean refused() {
		return this.status == 429 || this.status == 503;
	}

}
