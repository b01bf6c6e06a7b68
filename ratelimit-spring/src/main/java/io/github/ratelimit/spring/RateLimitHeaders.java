package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate-limit headers of a decision, as enabled: {@code legacy}, {@code X-RateLimit-Limit},
 * {@code -Remaining} and {@code -Reset} (epoch seconds) of the most restrictive policy; {@code standard},
 * {@code RateLimit-Policy} and {@code RateLimit} of draft-ietf-httpapi-ratelimit-headers-10, one entry per policy,
 * with a partition key {@code pk} (an {@code HmacSHA256} of the identity under {@code partitionKeySecret}) unless the
 * secret is null; {@code retryAfter}, {@code Retry-After} in whole seconds on denial. Only policies with figures are
 * reported, and a missing-key refusal gets no headers.
 */
public record RateLimitHeaders(boolean legacy, boolean standard, boolean retryAfter,
		@Nullable String partitionKeySecret) {

	public static final String X_LIMIT = "X-RateLimit-Limit";

	public static final String X_REMAINING = "X-RateLimit-Remaining";

	public static final String X_RESET = "X-RateLimit-Reset";

	public static final String RATELIMIT = "RateLimit";

	public static final String RATELIMIT_POLICY = "RateLimit-Policy";

	/** All header groups on, without partition keys. */
	public static final RateLimitHeaders ALL = new RateLimitHeaders(true, true, true);

	private static final int PARTITION_KEY_BYTES = 12;

	/**
	 * An initialised HMAC per secret (from configuration: one or a few), cloned for each partition key: looking up
	 * the provider and initialising the key cost several times the hash of a short identity.
	 */
	private static final Map<String, Mac> HMACS = new ConcurrentHashMap<>();

	public RateLimitHeaders {
		if (partitionKeySecret != null && partitionKeySecret.isEmpty()) {
			throw new IllegalArgumentException("The partition key secret must not be empty");
		}
	}

	/** Headers without partition keys. */
	public RateLimitHeaders(boolean legacy, boolean standard, boolean retryAfter) {
		this(legacy, standard, retryAfter, null);
	}

	/** The headers of a decision (none when no policy applied); {@code nowMillis} for {@code X-RateLimit-Reset}. */
	public HttpHeaders of(RateLimitDecision decision, long nowMillis) {
		HttpHeaders headers = new HttpHeaders();
		write(decision, nowMillis, headers::set);
		return headers;
	}

	/**
	 * Hands the headers of a decision to {@code sink}, each name once, in {@link #of}'s order: what a filter sets on
	 * its response without building an {@link HttpHeaders} (whose case-insensitive names cost on every request).
	 */
	public void write(RateLimitDecision decision, long nowMillis, BiConsumer<String, String> sink) {
		for (PolicyDecision policy : decision.decisions()) {
			if (MissingKey.isDenial(policy)) {
				return; // refused for a missing key: a client error, no quota to report, nothing to wait for
			}
		}
		RateLimitDecision reported = decision.degraded() ? withFigures(decision) : decision;
		PolicyDecision deciding = reported.deciding().orElse(null);
		if (this.legacy && deciding != null) {
			sink.accept(X_LIMIT, Long.toString(deciding.limit()));
			sink.accept(X_REMAINING, Long.toString(remainingOf(deciding)));
			sink.accept(X_RESET, Long.toString(ceilSeconds(Duration.ofMillis(nowMillis).plus(deciding.resetAfter()))));
		}
		if (this.standard && deciding != null) {
			// appended, not concatenated: built on every response
			StringBuilder policies = new StringBuilder(64);
			StringBuilder limits = new StringBuilder(64);
			for (PolicyDecision policy : reported.decisions()) {
				if (!policies.isEmpty()) {
					policies.append(", ");
					limits.append(", ");
				}
				String pk = (this.partitionKeySecret != null) ? partitionKey(policy.identity()) : null;
				quoted(policies, policy.policy().name()).append(";q=").append(policy.limit());
				if (policy.policy().algorithm() == Algorithm.CONCURRENCY) {
					policies.append(";qu=\"concurrent-requests\"");
				}
				else {
					policies.append(";w=").append(ceilSeconds(policy.policy().window()));
				}
				quoted(limits, policy.policy().name()).append(";r=").append(remainingOf(policy))
					.append(";t=").append(ceilSeconds(resetOf(policy)));
				if (pk != null) {
					policies.append(";pk=").append(pk);
					limits.append(";pk=").append(pk);
				}
			}
			sink.accept(RATELIMIT_POLICY, policies.toString());
			sink.accept(RATELIMIT, limits.toString());
		}
		if (this.retryAfter && !decision.allowed()) {
			sink.accept(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds(decision)));
		}
	}

	/** What is left after an admission, 0 on a denial (a 429 never says quota remains for the request). */
	static long remainingOf(PolicyDecision decision) {
		return decision.allowed() ? decision.remaining() : 0;
	}

	/** The partition key: a Byte Sequence of the keyed hash of the identity, the same on both fields. */
	private String partitionKey(String identity) {
		Mac mac = hmac(Objects.requireNonNull(this.partitionKeySecret));
		byte[] hash = mac.doFinal(identity.getBytes(StandardCharsets.UTF_8));
		return ':' + Base64.getEncoder().encodeToString(Arrays.copyOf(hash, PARTITION_KEY_BYTES)) + ':';
	}

	private static Mac hmac(String secret) {
		try {
			return (Mac) HMACS.computeIfAbsent(secret, RateLimitHeaders::newHmac).clone();
		}
		catch (CloneNotSupportedException ex) {
			return newHmac(secret); // a provider whose HMAC cannot be copied
		}
	}

	private static Mac newHmac(String secret) {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
			return mac;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is required by every Java platform", ex);
		}
	}

	private static RateLimitDecision withFigures(RateLimitDecision decision) {
		return new RateLimitDecision(
				decision.decisions().stream().filter((policy) -> policy.enforcement().hasFigures()).toList(),
				Permit.NONE);
	}

	/** The {@code Retry-After} of a denial: the longest wait of the denying policies, in seconds rounded up, >= 1. */
	static long retryAfterSeconds(RateLimitDecision decision) {
		return Math.max(1, ceilSeconds(decision.retryAfter()));
	}

	private static Duration resetOf(PolicyDecision decision) {
		return decision.allowed() ? decision.resetAfter() : decision.retryAfter();
	}

	static long ceilSeconds(Duration duration) {
		long seconds = duration.getSeconds();
		return (duration.getNano() > 0) ? seconds + 1 : seconds;
	}

	/** A Structured Field string; policy names are validated to plain characters, this escapes anyway. */
	private static StringBuilder quoted(StringBuilder into, String value) {
		into.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '\\' || c == '"') {
				into.append('\\');
			}
			into.append(c);
		}
		return into.append('"');
	}

}
