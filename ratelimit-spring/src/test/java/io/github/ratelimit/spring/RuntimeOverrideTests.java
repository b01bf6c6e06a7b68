package io.github.ratelimit.spring;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The JSON a runtime override is stored in: the values set only, read back as they were.
 */
class RuntimeOverrideTests {

	@Test
	void isStoredAsJsonOfTheValuesSet() {
		RuntimeOverride override = new RuntimeOverride(500L, Duration.ofMinutes(1), null, Duration.ofMillis(500),
				false);
		assertThat(override.format())
			.isEqualTo("{\"limit\":500,\"window\":\"PT1M\",\"minInterval\":\"PT0.5S\",\"enabled\":false}");
		assertThat(RuntimeOverride.parse(override.format())).isEqualTo(override);
		assertThat(new RuntimeOverride(null, null, 7L, null).format()).isEqualTo("{\"burst\":7}");
	}

	@Test
	void unreadableValuesAreIllegalArguments() {
		assertThatIllegalArgumentException().isThrownBy(() -> RuntimeOverride.parse("limit=500"));
		assertThatIllegalArgumentException().isThrownBy(() -> RuntimeOverride.parse("{\"limit\":\"many\"}"));
		assertThatIllegalArgumentException().isThrownBy(() -> RuntimeOverride.parse("{\"rate\":5}"));
	}

}
