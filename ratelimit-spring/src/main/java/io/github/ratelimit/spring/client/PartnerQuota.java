package io.github.ratelimit.spring.client;

import org.jspecify.annotations.Nullable;

/**
 * One quota a partner reported on a response: a policy of its {@code RateLimit} field (with what
 * {@code RateLimit-Policy} says of it), or its {@code X-RateLimit-*} fields.
 *
 * @param policy the partner's policy name, made safe to store (see {@link PartnerHeaders})
 * @param partition the partition key {@code pk}, made safe to store, or empty
 * @param remaining the quota left
 * @param resetSeconds seconds until the quota resets
 * @param limit the quota of the window, or null when not reported
 * @param windowSeconds the window in seconds, or null when not reported
 */
public record PartnerQuota(String policy, String partition, long remaining, long resetSeconds, @Nullable Long limit,
		@Nullable Long windowSeconds) {

	/** @return the entry's name in the partner's state: policy and partition */
	String entry() {
		return this.partition.isEmpty() ? this.policy : this.policy + "|" + this.partition;
	}

}
