package io.github.ratelimit.it.webflux;

import io.github.ratelimit.it.support.ShadowScenarios;
import org.junit.jupiter.api.Test;

/**
 * Shadow mode on the reactive stack and real Redis ({@link ShadowScenarios}).
 */
class ShadowModeIntegrationTests extends WebfluxIntegrationTestSupport {

	@Test
	void aShadowPolicyOnARuleNeverDeniesAndIsCountedApart() {
		ShadowScenarios.aShadowPolicyOnARuleNeverDeniesAndIsCountedApart(this::get);
	}

	@Test
	void aShadowAnnotationNeverDeniesAndIsCountedApart() {
		ShadowScenarios.aShadowAnnotationNeverDeniesAndIsCountedApart(this::get);
	}

}
