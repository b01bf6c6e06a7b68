package io.github.ratelimit.spring;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations as Spring Boot properties accept them: ISO-8601 ({@code PT1M}) or simple ({@code 500ms},
 * {@code 10s}, {@code 1m}, {@code 2h}, {@code 1d}).
 */
final class Durations {

	private static final Pattern SIMPLE = Pattern.compile("^([+]?\\d+)(ns|us|ms|s|m|h|d)?$");

	private Durations() {
	}

	static Duration parse(String value) {
		String text = value.trim().toLowerCase(Locale.ROOT);
		Matcher matcher = SIMPLE.matcher(text);
		if (matcher.matches()) {
			long amount = Long.parseLong(matcher.group(1));
			String unit = (matcher.group(2) != null) ? matcher.group(2) : "ms";
			return switch (unit) {
				case "ns" -> Duration.ofNanos(amount);
				case "us" -> Duration.ofNanos(amount * 1000);
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				default -> Duration.ofDays(amount);
			};
		}
		try {
			return Duration.parse(value.trim());
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + value + "' is not a duration (e.g. 500ms, 10s, 1m, PT1M)", ex);
		}
	}

}
