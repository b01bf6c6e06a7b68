package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A call to a rate-limited partner that could not be made within its maximum wait, or that the partner refused and
 * that is not retried (a request that is not idempotent, retries used up): carries the partner's figures.
 */
public class PartnerRateLimitedException extends RuntimeException {

	private final String partner;

	private final int status;

	private final @Nullable Duration retryAfter;

	private final List<PartnerQuota> quotas;

	/**
	 * @param partner the partner's name
	 * @param status the partner's refusal (429, 503), or 0 when the call was not sent: its turn was beyond the
	 * maximum wait
	 * @param retryAfter the partner's Retry-After, or for a call not sent the wait its turn needed
	 * @param quotas the quotas the partner's last response reported
	 */
	public PartnerRateLimitedException(String partner, int status, @Nullable Duration retryAfter,
			List<PartnerQuota> quotas) {
		super(message(partner, status, retryAfter, quotas));
		this.partner = partner;
		this.status = status;
		this.retryAfter = retryAfter;
		this.quotas = List.copyOf(quotas);
	}

	private static String message(String partner, int status, @Nullable Duration retryAfter,
			List<PartnerQuota> quotas) {
		String what = (status == 0) ? "Call to " + partner + " not sent: its turn is beyond the maximum wait"
				: "Partner " + partner + " refused the call (" + status + ")";
		return what + ((retryAfter != null) ? ", retry after " + retryAfter.toMillis() + "ms" : "")
				+ (quotas.isEmpty() ? "" : ", quotas " + quotas);
	}

	/** @return the partner's name */
	public String partner() {
		return this.partner;
	}

	/** @return the partner's status (429, 503), or 0 when the call was not sent */
	public int status() {
		return this.status;
	}

	/** @return the partner's Retry-After, or the wait a call not sent needed; null when unknown */
	public @Nullable Duration retryAfter() {
		return this.retryAfter;
	}

	/** @return the quotas the partner reported last */
	public List<PartnerQuota> quotas() {
		return this.quotas;
	}

}
