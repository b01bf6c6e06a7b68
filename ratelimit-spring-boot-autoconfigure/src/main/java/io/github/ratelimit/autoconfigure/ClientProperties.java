package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Outgoing calls to rate-limited partners, {@code ratelimit.client.*}: applied to the clients the application names
 * through the {@code RateLimitedClients} bean.
 *
 * @param partners Rate-limited partners by name (letters, digits, '.', '_' and '-').
 */
public record ClientProperties(@DefaultValue Map<String, Partner> partners) {

	/**
	 * One partner.
	 *
	 * @param maxWait Longest a call waits in all (for its turn and after refusals) from its first try; a call whose
	 * turn comes later fails at once. 0 never waits.
	 * @param maxRetries How many times a call the partner refused (429, or 503 with Retry-After) is sent again.
	 * @param retryNonIdempotent Whether refused POST and PATCH calls are sent again too.
	 * @param paceBelow Share of the partner's limit below which the quota left is spread evenly over the time to its
	 * reset: 0 paces only when none is left, 1 always. At least 0, at most 1.
	 * @param shared Whether what one instance learns of the partner is shared with the others through Redis (when
	 * the application has a Redis connection).
	 * @param maxBelieved Longest wait a partner's response is believed to impose: a longer reset, window or
	 * Retry-After counts as this long, so that one odd response cannot stop every call for a day. At least 1s.
	 */
	public record Partner(@DefaultValue("30s") Duration maxWait, @DefaultValue("3") int maxRetries,
			@DefaultValue("false") boolean retryNonIdempotent, @DefaultValue("0.5") double paceBelow,
			@DefaultValue("true") boolean shared, @DefaultValue("10m") Duration maxBelieved) {
	}

}
