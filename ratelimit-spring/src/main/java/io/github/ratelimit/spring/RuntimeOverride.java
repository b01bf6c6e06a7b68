package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.jspecify.annotations.Nullable;

import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * Limits set at runtime (through the {@code ratelimits} Actuator endpoint) in place of a policy's configured ones,
 * for the whole policy or for one identity, and its kill switch.
 *
 * @param limits the limits replacing the policy's (each value left null keeps the policy's)
 * @param enabled false to switch enforcement off (the kill switch: requests pass unchecked and uncounted), true to
 * switch it back on, or null
 */
public record RuntimeOverride(Limits limits, @Nullable Boolean enabled) {

	/**
	 * Whether it switches enforcement off.
	 * @return true when {@code enabled} is false
	 */
	public boolean disables() {
		return Boolean.FALSE.equals(this.enabled);
	}

	/**
	 * The values as text, e.g. {@code limit=500;window=PT1M}: how they are stored in Redis and logged.
	 * @return the text
	 */
	public String format() {
		StringBuilder text = new StringBuilder();
		values().forEach((name, value) -> text.append((text.length() == 0) ? "" : ";").append(name).append('=')
			.append(value));
		return text.toString();
	}

	/**
	 * The values set, by name ({@code limit}, {@code window}, {@code burst}, {@code min-interval}, {@code enabled}).
	 * @return the values in that order
	 */
	public Map<String, Object> values() {
		Map<String, Object> values = new LinkedHashMap<>();
		if (this.limits.limit() != null) {
			values.put("limit", this.limits.limit());
		}
		if (this.limits.window() != null) {
			values.put("window", this.limits.window());
		}
		if (this.limits.burst() != null) {
			values.put("burst", this.limits.burst());
		}
		if (this.limits.minInterval() != null) {
			values.put("min-interval", this.limits.minInterval());
		}
		if (this.enabled != null) {
			values.put("enabled", this.enabled);
		}
		return values;
	}

	/**
	 * Reads {@link #format()}'s text.
	 * @param text the text
	 * @return the override
	 * @throws IllegalArgumentException naming the value that cannot be read
	 */
	public static RuntimeOverride parse(String text) {
		Long limit = null;
		Duration window = null;
		Long burst = null;
		Duration minInterval = null;
		Boolean enabled = null;
		for (String pair : text.split(";")) {
			if (pair.isBlank()) {
				continue;
			}
			int equals = pair.indexOf('=');
			if (equals < 0) {
				throw new IllegalArgumentException("'" + pair + "' is not name=value");
			}
			String name = pair.substring(0, equals).trim();
			String value = pair.substring(equals + 1).trim();
			switch (name) {
				case "limit" -> limit = number(name, value);
				case "window" -> window = duration(name, value);
				case "burst" -> burst = number(name, value);
				case "min-interval", "minInterval" -> minInterval = duration(name, value);
				case "enabled" -> enabled = Boolean.parseBoolean(value);
				default -> throw new IllegalArgumentException("unknown field '" + name
						+ "'; expected limit, window, burst, min-interval or enabled");
			}
		}
		return new RuntimeOverride(new Limits(limit, window, burst, minInterval), enabled);
	}

	/**
	 * A number of a field.
	 * @param field the field, for the message
	 * @param value the text
	 * @return the number
	 * @throws IllegalArgumentException naming the field
	 */
	public static long number(String field, String value) {
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(field + " must be a whole number but was '" + value + "'");
		}
	}

	/**
	 * A duration of a field, in Spring's formats ({@code 500ms}, {@code 1m}, {@code PT1H}).
	 * @param field the field, for the message
	 * @param value the text
	 * @return the duration
	 * @throws IllegalArgumentException naming the field
	 */
	public static Duration duration(String field, String value) {
		try {
			return DurationFormatterUtils.detectAndParse(value.trim());
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException(field + " must be a duration such as 500ms, 10s, 1m or PT1H but was '"
					+ value + "'");
		}
	}

}
