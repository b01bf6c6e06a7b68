package io.github.ratelimit.spring.client;

import java.time.Duration;

/** Told what the partner clients do, for metrics (the auto-configuration's Micrometer meters). */
public interface PartnerCallListener {

	/** Does nothing. */
	PartnerCallListener NONE = new PartnerCallListener() {
	};

	/**
	 * A call waited for its turn before it was sent (pacing, or a Retry-After another call learned).
	 * @param partner the partner's name
	 * @param wait how long
	 */
	default void waited(String partner, Duration wait) {
	}

	/**
	 * A call the partner refused (429 or 503) is sent again.
	 * @param partner the partner's name
	 * @param status the refusal's status
	 */
	default void retried(String partner, int status) {
	}

	/**
	 * A call failed with a {@link PartnerRateLimitedException}.
	 * @param partner the partner's name
	 */
	default void refused(String partner) {
	}

}
