package io.github.ratelimit.test;

import io.github.ratelimit.core.PolicyDecision;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What {@link RateLimitTester} does for a user's MockMvc tests, whatever the backend: requests through MockMvc are
 * limited like real ones, resets (everything, one policy, one identity) give back exactly what they name, and state
 * reads see what the requests took. Each subclass runs it on one backend.
 */
abstract class RateLimitTesterContractTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	RateLimitTester rateLimits;

	@BeforeEach
	void resetLimits() {
		this.rateLimits.resetAll();
	}

	@Test
	void aRequestThroughMockMvcIsLimitedLikeARealOne() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk().headers().hasValue("X-RateLimit-Remaining",
					String.valueOf(2 - i));
		}
		assertThat(this.mvc.get().uri("/api/hello")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.containsHeader("Retry-After");
		PolicyDecision state = this.rateLimits.state("per-client", "127.0.0.1");
		assertThat(state.allowed()).isFalse();
		assertThat(state.remaining()).isZero();
		assertThat(state.limit()).isEqualTo(3);
		assertThat(state.retryAfter()).isPositive();
	}

	@Test
	void resetAllGivesEveryPolicyAndIdentityItsQuotaBack() {
		exhaustPerClient();
		exhaustKey("a");
		exhaustName("bob");
		assertThat(this.rateLimits.resetAll()).isEqualTo(3);
		assertThat(this.rateLimits.remaining("per-client", "127.0.0.1")).isEqualTo(3);
		assertThat(this.rateLimits.remaining("per-key", "a")).isEqualTo(2);
		assertThat(this.rateLimits.remaining("per-name", "bob")).isEqualTo(2);
		assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk();
	}

	@Test
	void resetOfOnePolicyLeavesTheOthersAlone() {
		exhaustPerClient();
		exhaustName("bob");
		assertThat(this.rateLimits.reset("per-name")).isEqualTo(1);
		assertThat(this.mvc.get().uri("/names/bob")).hasStatusOk();
		assertThat(this.mvc.get().uri("/api/hello")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void resetOfOneIdentityLeavesTheOtherIdentitiesAlone() {
		exhaustKey("a");
		assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", "b")).hasStatusOk();
		assertThat(this.rateLimits.reset("per-key", "a")).isEqualTo(1);
		assertThat(this.rateLimits.remaining("per-key", "a")).isEqualTo(2);
		assertThat(this.rateLimits.remaining("per-key", "b")).isEqualTo(1);
		assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", "a")).hasStatusOk();
	}

	@Test
	void resetOfAnIdentityCoversEveryPolicyOfItAndNoOtherIdentity() {
		exhaustKey("carol");
		exhaustName("carol");
		exhaustName("dave");
		assertThat(this.rateLimits.resetIdentity("carol")).isEqualTo(2);
		assertThat(this.rateLimits.remaining("per-key", "carol")).isEqualTo(2);
		assertThat(this.rateLimits.remaining("per-name", "carol")).isEqualTo(2);
		assertThat(this.rateLimits.state("per-name", "dave").allowed()).isFalse();
	}

	@Test
	void stateIsReadWithoutTakingAndWithTheIdentitysOverride() {
		assertThat(this.rateLimits.state("per-key", "vip").limit()).isEqualTo(5);
		assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", "vip")).hasStatusOk();
		for (int i = 0; i < 3; i++) {
			assertThat(this.rateLimits.remaining("per-key", "vip")).isEqualTo(4);
		}
		assertThat(this.rateLimits.state("per-key", "vip").allowed()).isTrue();
	}

	@Test
	void anUnknownPolicyIsNamedWithTheKnownOnes() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.rateLimits.state("per-cilent", "127.0.0.1"))
			.withMessageContaining("'per-cilent'")
			.withMessageContaining("per-client");
	}

	private void exhaustPerClient() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.mvc.get().uri("/api/hello")).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/api/hello")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

	private void exhaustKey(String key) {
		for (int i = 0; i < 2; i++) {
			assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", key)).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/keyed/hello").header("X-Api-Key", key))
			.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

	private void exhaustName(String name) {
		for (int i = 0; i < 2; i++) {
			assertThat(this.mvc.get().uri("/names/" + name)).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/names/" + name)).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

}
