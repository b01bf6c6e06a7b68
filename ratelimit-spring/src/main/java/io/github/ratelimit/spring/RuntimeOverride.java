package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * Limits set at runtime (the {@code ratelimits} endpoint) for a policy or one identity; a null value keeps the
 * policy's. {@code burst} is for token bucket and GCRA, {@code minInterval} for the sliding window log;
 * {@code enabled} false is the kill switch (requests pass unchecked and uncounted), true switches it back on.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RuntimeOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Long burst,
		@Nullable Duration minInterval, @Nullable Boolean enabled) {

	private static final JsonMapper JSON = JsonMapper.shared();

	/** Refuses what it does not know, as an override applied in part could be the wrong one. */
	private static final ObjectReader READER = JSON.readerFor(RuntimeOverride.class)
		.with(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

	/** An override of limits only. */
	public RuntimeOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Long burst,
			@Nullable Duration minInterval) {
		this(limit, window, burst, minInterval, null);
	}

	/** Whether it switches enforcement off ({@code enabled} false). */
	public boolean disables() {
		return Boolean.FALSE.equals(this.enabled);
	}

	/** The limits it sets, for {@link RateLimitPolicy#with}. */
	public Limits limits() {
		return new Limits(this.limit, this.window, this.burst, this.minInterval);
	}

	/** The values set as JSON, as stored and logged: {@code {"limit":500,"window":"PT1M"}}. */
	public String format() {
		return JSON.writeValueAsString(this);
	}

	/** The values set, by name ({@code limit}, ..., {@code min-interval}, {@code enabled}). */
	public Map<String, Object> values() {
		Map<String, Object> values = new LinkedHashMap<>();
		values.put("limit", this.limit);
		values.put("window", this.window);
		values.put("burst", this.burst);
		values.put("min-interval", this.minInterval);
		values.put("enabled", this.enabled);
		values.values().removeIf(Objects::isNull);
		return values;
	}

	/** Reads {@link #format()}'s JSON; throws {@link IllegalArgumentException} saying what cannot be read. */
	public static RuntimeOverride parse(String json) {
		try {
			return READER.readValue(json);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException(ex.getOriginalMessage(), ex);
		}
	}

	/** A field's duration in Spring's formats ({@code 500ms}, {@code PT1H}); an IllegalArgumentException names it. */
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
