package io.github.ratelimit.spring.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Reads what a partner's response says of its limits, in the three forms: {@code RateLimit} and
 * {@code RateLimit-Policy} of draft-ietf-httpapi-ratelimit-headers-10 (Structured Field Lists, one item per policy,
 * parameters {@code r}, {@code t}, {@code q}, {@code qu}, {@code w}, {@code pk}), else {@code X-RateLimit-Limit},
 * {@code -Remaining} and {@code -Reset} (a reset from 10^12 is an epoch millisecond, from 10^9 an epoch second, else
 * seconds from now), and {@code Retry-After} on a 429 or 503 (seconds or an HTTP-date in any of RFC 9110's three
 * forms, compared with the response's {@code Date} so that clocks need not agree). The partner is not trusted: a
 * field that does not parse is ignored, negative figures are dropped, times are capped at the believed maximum, at
 * most 16 quotas are kept, and names that are long or odd are digested. A quota without {@code t} counts only when
 * it has none left (until {@code w}, else a second); a quota of a unit other than requests ({@code qu}) only then
 * too, and never paces by its count.
 */
final class PartnerHeaders {

	static final String RATELIMIT = "RateLimit";

	static final String RATELIMIT_POLICY = "RateLimit-Policy";

	/** The policy name given to the X-RateLimit-* quota. */
	static final String LEGACY_POLICY = "x-ratelimit";

	/** Longest time believed by default, in seconds (a reset, a window, a Retry-After). */
	static final long MAX_SECONDS = 600;

	static final int MAX_QUOTAS = 16;

	private static final long EPOCH_SECONDS_FROM = 1_000_000_000L;

	private static final long EPOCH_MILLIS_FROM = 1_000_000_000_000L;

	private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._~-]{1,64}");

	private PartnerHeaders() {
	}

	/**
	 * @param headers the response's headers
	 * @param status its status code
	 * @param nowMillis this instance's clock, used only when the response has no {@code Date}
	 * @return what the response said
	 */
	static PartnerResponse read(HttpHeaders headers, int status, long nowMillis) {
		return read(headers, status, nowMillis, MAX_SECONDS);
	}

	/**
	 * @param maxSeconds the longest time believed (a longer one counts as this long)
	 */
	static PartnerResponse read(HttpHeaders headers, int status, long nowMillis, long maxSeconds) {
		long date = responseDate(headers, nowMillis);
		List<PartnerQuota> quotas = standard(headers, maxSeconds);
		if (quotas.isEmpty()) {
			quotas = legacy(headers, date, maxSeconds);
		}
		boolean refused = status == 429 || status == 503;
		Duration retryAfter = refused ? retryAfter(headers.getFirst(HttpHeaders.RETRY_AFTER), date) : null;
		if (retryAfter != null && retryAfter.toSeconds() > maxSeconds) {
			retryAfter = Duration.ofSeconds(maxSeconds);
		}
		return new PartnerResponse(status, quotas, retryAfter);
	}

	private static List<PartnerQuota> standard(HttpHeaders headers, long maxSeconds) {
		List<Object> limits = list(headers, RATELIMIT);
		List<Object> policies = list(headers, RATELIMIT_POLICY);
		List<PartnerQuota> quotas = new ArrayList<>();
		for (Object member : limits) {
			if (!(member instanceof StructuredFields.Item item) || quotas.size() == MAX_QUOTAS) {
				continue;
			}
			PartnerQuota quota = quota(item, policies, maxSeconds);
			if (quota != null) {
				quotas.add(quota);
			}
		}
		return quotas;
	}

	/** One RateLimit item with its policy: null when it says nothing to pace by. */
	private static @Nullable PartnerQuota quota(StructuredFields.Item item, List<Object> policies, long maxSeconds) {
		String name = name(item.value());
		Long remaining = item.integer("r");
		if (name == null || remaining == null || remaining < 0) {
			return null;
		}
		Object pk = item.parameters().get("pk");
		StructuredFields.Item policy = policyOf(policies, name, pk);
		Long window = (policy != null) ? positive(policy.integer("w")) : null;
		Object unit = (policy != null) ? policy.parameters().get("qu") : null;
		boolean requests = unit == null || "requests".equals(name(unit));
		Long reset = item.integer("t");
		if (reset == null && remaining == 0) {
			reset = (window != null) ? window : 1L;
		}
		if (reset == null || reset < 0 || (!requests && remaining > 0)) {
			return null;
		}
		Long limit = (policy != null && requests) ? positive(policy.integer("q")) : null;
		return new PartnerQuota(safe(name), partition(pk), remaining, Math.min(reset, maxSeconds), limit,
				(window != null) ? Math.min(window, maxSeconds) : null);
	}

	/** The RateLimit-Policy item of the same name and partition, else of the same name without a partition. */
	private static StructuredFields.@Nullable Item policyOf(List<Object> policies, String name, @Nullable Object pk) {
		StructuredFields.Item unpartitioned = null;
		for (Object member : policies) {
			if (member instanceof StructuredFields.Item item && name.equals(name(item.value()))) {
				Object itemPk = item.parameters().get("pk");
				if (partition(pk).equals(partition(itemPk))) {
					return item;
				}
				if (itemPk == null && unpartitioned == null) {
					unpartitioned = item;
				}
			}
		}
		return unpartitioned;
	}

	private static List<PartnerQuota> legacy(HttpHeaders headers, long date, long maxSeconds) {
		Long remaining = number(headers.getFirst("X-RateLimit-Remaining"));
		Long reset = number(headers.getFirst("X-RateLimit-Reset"));
		if (remaining == null || reset == null) {
			return List.of();
		}
		long seconds = reset;
		if (reset >= EPOCH_MILLIS_FROM) {
			seconds = Math.max(0, -Math.floorDiv(date - reset, 1000));
		}
		else if (reset >= EPOCH_SECONDS_FROM) {
			seconds = Math.max(0, reset - Math.floorDiv(date, 1000));
		}
		return List.of(new PartnerQuota(LEGACY_POLICY, "", remaining, Math.min(seconds, maxSeconds),
				positive(number(headers.getFirst("X-RateLimit-Limit"))), null));
	}

	/** Retry-After as delay-seconds or an HTTP-date; null when absent or invalid. */
	static @Nullable Duration retryAfter(@Nullable String value, long dateMillis) {
		if (value == null) {
			return null;
		}
		Long seconds = number(value);
		if (seconds == null) {
			// an HTTP-date: IMF-fixdate, RFC 850 or asctime, as Spring reads dates
			HttpHeaders date = new HttpHeaders();
			date.set(HttpHeaders.RETRY_AFTER, value.trim().replaceFirst("^(\\w{3} \\w{3})  (\\d) ", "$1 0$2 "));
			try {
				long at = date.getFirstDate(HttpHeaders.RETRY_AFTER);
				seconds = Math.max(0, -Math.floorDiv(dateMillis - at, 1000));
			}
			catch (IllegalArgumentException ex) {
				return null;
			}
		}
		return Duration.ofSeconds(seconds);
	}

	private static long responseDate(HttpHeaders headers, long nowMillis) {
		try {
			long date = headers.getDate();
			return (date >= 0) ? date : nowMillis;
		}
		catch (IllegalArgumentException ex) {
			return nowMillis;
		}
	}

	private static List<Object> list(HttpHeaders headers, String name) {
		List<String> values = headers.get(name);
		if (values == null || values.isEmpty()) {
			return List.of();
		}
		try {
			return StructuredFields.list(String.join(", ", values));
		}
		catch (IllegalArgumentException ex) {
			return List.of(); // an invalid field is ignored whole (RFC 9651)
		}
	}

	private static @Nullable String name(Object value) {
		if (value instanceof String string) {
			return string;
		}
		return (value instanceof StructuredFields.Token token) ? token.name() : null;
	}

	/** A non-negative integer of at most 15 digits, else null. */
	private static @Nullable Long number(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		return trimmed.matches("[0-9]{1,15}") ? Long.valueOf(trimmed) : null;
	}

	private static @Nullable Long positive(@Nullable Long value) {
		return (value != null && value > 0) ? value : null;
	}

	/** The partition key as stored: a byte sequence in base64url, else its name; digested when long or odd. */
	static String partition(@Nullable Object pk) {
		if (pk instanceof byte[] bytes) {
			return (bytes.length <= 32) ? Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)
					: digest(Base64.getEncoder().encodeToString(bytes));
		}
		String name = (pk != null) ? name(pk) : null;
		return (name != null) ? safe(name) : "";
	}

	/** A name as stored: itself when short and plain, else a digest of it. */
	static String safe(String name) {
		return SAFE.matcher(name).matches() ? name : digest(name);
	}

	private static String digest(String value) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return "sha256-" + HexFormat.of().formatHex(hash, 0, 12);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
