package io.github.ratelimit.spring.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
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
 * parameters {@code r}, {@code t}, {@code q}, {@code w}, {@code pk}), else {@code X-RateLimit-Limit},
 * {@code -Remaining} and {@code -Reset} (a reset above 10^9 is an epoch second, else seconds from now), and
 * {@code Retry-After} on a 429 or 503 (seconds or an HTTP-date, compared with the response's {@code Date} so that
 * clocks need not agree). The partner is not trusted: a field that does not parse is ignored, negative figures are
 * dropped, times are capped at a day, at most 16 quotas are kept, and names that are long or odd are digested.
 */
final class PartnerHeaders {

	static final String RATELIMIT = "RateLimit";

	static final String RATELIMIT_POLICY = "RateLimit-Policy";

	/** The policy name given to the X-RateLimit-* quota. */
	static final String LEGACY_POLICY = "x-ratelimit";

	/** Longest time believed, in seconds (a reset, a window, a Retry-After). */
	static final long MAX_SECONDS = 86_400;

	static final int MAX_QUOTAS = 16;

	private static final long EPOCH_SECONDS_FROM = 1_000_000_000L;

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
		long date = responseDate(headers, nowMillis);
		List<PartnerQuota> quotas = standard(headers);
		if (quotas.isEmpty()) {
			quotas = legacy(headers, date);
		}
		boolean refused = status == 429 || status == 503;
		Duration retryAfter = refused ? retryAfter(headers.getFirst(HttpHeaders.RETRY_AFTER), date) : null;
		return new PartnerResponse(status, quotas, retryAfter);
	}

	private static List<PartnerQuota> standard(HttpHeaders headers) {
		List<Object> limits = list(headers, RATELIMIT);
		List<Object> policies = list(headers, RATELIMIT_POLICY);
		List<PartnerQuota> quotas = new ArrayList<>();
		for (Object member : limits) {
			if (!(member instanceof StructuredFields.Item item) || quotas.size() == MAX_QUOTAS) {
				continue;
			}
			String name = name(item.value());
			Long remaining = item.integer("r");
			Long reset = item.integer("t");
			if (name == null || remaining == null || reset == null || remaining < 0 || reset < 0) {
				continue;
			}
			Object pk = item.parameters().get("pk");
			StructuredFields.Item policy = policyOf(policies, name, pk);
			Long limit = (policy != null) ? positive(policy.integer("q")) : null;
			Long window = (policy != null) ? positive(policy.integer("w")) : null;
			quotas.add(new PartnerQuota(safe(name), partition(pk), remaining, Math.min(reset, MAX_SECONDS), limit,
					(window != null) ? Math.min(window, MAX_SECONDS) : null));
		}
		return quotas;
	}

	/** The RateLimit-Policy item of the same name and partition. */
	private static StructuredFields.@Nullable Item policyOf(List<Object> policies, String name, @Nullable Object pk) {
		for (Object member : policies) {
			if (member instanceof StructuredFields.Item item && name.equals(name(item.value()))
					&& partition(pk).equals(partition(item.parameters().get("pk")))) {
				return item;
			}
		}
		return null;
	}

	private static List<PartnerQuota> legacy(HttpHeaders headers, long date) {
		Long remaining = number(headers.getFirst("X-RateLimit-Remaining"));
		Long reset = number(headers.getFirst("X-RateLimit-Reset"));
		if (remaining == null || reset == null) {
			return List.of();
		}
		long seconds = (reset >= EPOCH_SECONDS_FROM) ? Math.max(0, reset - Math.floorDiv(date, 1000)) : reset;
		return List.of(new PartnerQuota(LEGACY_POLICY, "", remaining, Math.min(seconds, MAX_SECONDS),
				positive(number(headers.getFirst("X-RateLimit-Limit"))), null));
	}

	/** Retry-After as delay-seconds or an HTTP-date; null when absent or invalid. */
	static @Nullable Duration retryAfter(@Nullable String value, long dateMillis) {
		if (value == null) {
			return null;
		}
		Long seconds = number(value);
		if (seconds == null) {
			try {
				long at = ZonedDateTime.parse(value.trim(), DateTimeFormatter.RFC_1123_DATE_TIME)
					.toInstant()
					.toEpochMilli();
				seconds = Math.max(0, -Math.floorDiv(dateMillis - at, 1000));
			}
			catch (DateTimeParseException ex) {
				return null;
			}
		}
		return Duration.ofSeconds(Math.min(seconds, MAX_SECONDS));
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
