package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Assertions on startup failures caused by an invalid configuration property.
 */
public final class InvalidProperties {

	private InvalidProperties() {
	}

	/**
	 * Asserts that a startup failure reports an invalid value of a property, for a reason.
	 * @param failure the startup failure
	 * @param property the name of the property at fault
	 * @param reasons parts of the reason
	 */
	public static void assertInvalidProperty(@Nullable Throwable failure, String property, String... reasons) {
		InvalidConfigurationPropertyValueException invalid = invalidProperty(failure);
		assertThat(invalid.getName()).isEqualTo(property);
		for (String reason : reasons) {
			assertThat(invalid.getReason()).contains(reason);
		}
	}

	private static InvalidConfigurationPropertyValueException invalidProperty(@Nullable Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidConfigurationPropertyValueException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("Expected an invalid configuration property, but the failure was " + failure,
				failure);
	}

}
