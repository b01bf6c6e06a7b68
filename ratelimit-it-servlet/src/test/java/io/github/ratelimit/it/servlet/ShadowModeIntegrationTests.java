package io.github.ratelimit.it.servlet;

import io.github.ratelimit.it.support.HttpGet;
import io.github.ratelimit.it.support.ShadowScenarios;
import org.junit.jupiter.api.Test;

/**
 * Shadow mode on the servlet stack and real Redis ({@link ShadowScenarios}).
 */
class ShadowModeIntegrationTests extends IntegrationTestSupport {

	private HttpGet http() {
		return (path, client) -> this.http.get(path, "X-Client", client);
	}

	@Test
	void aShadowPolicyOnARuleNeverDeniesAndIsCountedApart() {
		ShadowScenarios.aShadowPolicyOnARuleNeverDeniesAndIsCountedApart(http());
	}

	@Test
	void aShadowAnnotationNeverDeniesAndIsCountedApart() {
		ShadowScenarios.aShadowAnnotationNeverDeniesAndIsCountedApart(http());
	}

}
