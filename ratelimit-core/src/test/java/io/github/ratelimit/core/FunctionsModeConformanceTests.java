package io.github.ratelimit.core;

import org.junit.jupiter.api.Nested;

/**
 * The conformance suite and the agreement trace again, with the Redis backend running its scripts as Redis functions
 * ({@code FUNCTION LOAD} and {@code FCALL}), on a standalone server and on a Cluster. Skipped on a Redis older than 7
 * (the first CI leg runs 6.2) and on the local backend, which runs no scripts.
 */
class FunctionsModeConformanceTests {

	@Nested
	class Conformance extends AlgorithmConformanceTests {

		@Override
		Backends.Fixture fixture(Backends kind) {
			return kind.freshInFunctionsMode();
		}

	}

	@Nested
	class Agreement extends BackendAgreementTests {

		@Override
		Backends.Fixture fixture(Backends kind) {
			return kind.freshInFunctionsMode();
		}

	}

}
