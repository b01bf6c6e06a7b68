package io.github.ratelimit.spring;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A filter rule refuses what could never match: a path without its leading slash, a method that is not HTTP's.
 */
class RateLimitRuleTests {

	@Test
	void rulesRejectPathsWithoutASlashAndUnknownMethods() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitRule.of(List.of("api/**"), Set.of(), List.of("p")))
			.withMessageContaining("must start with '/'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitRule.of(List.of("/api/**"), Set.of("GTE"), List.of("p")))
			.withMessageContaining("'GTE' is not an HTTP method");
	}

}
