package io.github.ratelimit.spring.client;

import java.util.LinkedHashMap;
import java.util.Map;

/** The one shape in which both states describe a partner (the Actuator endpoint shows it). */
final class PartnerStates {

	private PartnerStates() {
	}

	static Map<String, Object> describe(long remaining, long resetInMillis, long limit, long windowMillis) {
		Map<String, Object> quota = new LinkedHashMap<>();
		quota.put("remaining", remaining);
		quota.put("resetInMillis", resetInMillis);
		if (limit > 0) {
			quota.put("limit", limit);
		}
		if (windowMillis > 0) {
			quota.put("windowMillis", windowMillis);
		}
		return quota;
	}

	static Map<String, Object> describe(Map<String, Object> quotas, long retryAfterMillis) {
		Map<String, Object> partner = new LinkedHashMap<>();
		partner.put("quotas", quotas);
		partner.put("retryAfterMillis", retryAfterMillis);
		return partner;
	}

}
