package io.github.ratelimit.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Identities come from clients: they never reach Redis raw, keys stay short, no client picks a hash slot, and two
 * identities never share a key.
 */
class HostileIdentityTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("per-client")
		.algorithm(Algorithm.FIXED_WINDOW)
		.limit(2)
		.window(Duration.ofMinutes(1))
		.build();

	private static final List<String> HOSTILE = List.of("x".repeat(10_240), "{", "}", "{}", "a{b}c", "{victim}",
			"line\nbreak", "tab\there", "carriage\rreturn", "nul\u0000byte", "espa\u00f1ol", "\u65e5\u672c",
			"emoji\ud83d\ude00", "", " ", "with space", "~", "quote\"d", "back\\slash", "*", "?", "[x]",
			"x".repeat(64), "x".repeat(65));

	private final RateLimitKeys keys = new RateLimitKeys(RateLimitKeys.DEFAULT_PREFIX);

	@Test
	void keysAreBoundedAndPlain() {
		for (String identity : HOSTILE) {
			String key = this.keys.key(POLICY, identity);
			assertThat(key.length()).as(shown(identity)).isLessThanOrEqualTo(3 + 2 + 64 + 1 + 64 + 3);
			assertThat(key).as(shown(identity)).matches("rl:\\{[A-Za-z0-9._:@/+=~-]+\\}:per-client:fw");
		}
	}

	@Test
	void plainShortIdentitiesStayReadable() {
		assertThat(this.keys.key(POLICY, "203.0.113.9")).isEqualTo("rl:{203.0.113.9}:per-client:fw");
		assertThat(this.keys.key(POLICY, "2001:db8::1")).isEqualTo("rl:{2001:db8::1}:per-client:fw");
		assertThat(this.keys.key(POLICY, "user@example.com")).isEqualTo("rl:{user@example.com}:per-client:fw");
	}

	@Test
	void noTwoIdentitiesShareAKeyNotEvenADigestPassedAsAnIdentity() {
		Set<String> seen = new HashSet<>();
		for (String identity : HOSTILE) {
			assertThat(seen.add(this.keys.key(POLICY, identity))).as(shown(identity)).isTrue();
		}
		for (String identity : HOSTILE) {
			String digest = RateLimitKeys.safeIdentity(identity);
			if (!digest.equals(identity)) {
				// a client that sends the digest of another identity gets a key of its own
				assertThat(seen.add(this.keys.key(POLICY, digest))).as("digest of " + shown(identity)).isTrue();
			}
		}
		assertThat(RateLimitKeys.safeIdentity("A")).isNotEqualTo(RateLimitKeys.safeIdentity("a"));
	}

	@Test
	void aClientCannotPickTheHashSlot() {
		String key = this.keys.key(POLICY, "{victim}");
		assertThat(key).doesNotContain("{victim}");
		int slot = ClusterSlotHashUtil.calculateSlot(key);
		assertThat(slot).isEqualTo(ClusterSlotHashUtil.calculateSlot("{" + RateLimitKeys.safeIdentity("{victim}") + "}"));
		assertThat(slot).isNotEqualTo(ClusterSlotHashUtil.calculateSlot("{victim}"));
	}

	@Test
	void prefixesThatWouldBreakHashTagsAreRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimitKeys("rl:{x}:"))
			.withMessageContaining("braces");
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimitKeys("has space"));
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void hostileIdentitiesAreCountedSeparatelyOnEveryBackend(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		// a sliding window log: a fixed window's boundary (each whole minute) amid the checks would refill it, and
		// expire its keys before they are counted
		RateLimitPolicy policy = POLICY.toBuilder().algorithm(Algorithm.SLIDING_WINDOW_LOG).build();
		for (String identity : HOSTILE) {
			assertThat(fixture.limiter.check(RateLimitRequest.of(policy, identity)).allowed()).isTrue();
			assertThat(fixture.limiter.check(RateLimitRequest.of(policy, identity)).allowed()).isTrue();
			RateLimitDecision third = fixture.limiter.check(RateLimitRequest.of(policy, identity));
			assertThat(third.allowed()).as(shown(identity)).isFalse();
			assertThat(third.decisions().get(0).identity()).isEqualTo(identity);
		}
		if (kind != Backends.LOCAL) {
			assertThat(fixture.keys()).hasSize(HOSTILE.size());
			assertThat(fixture.keys()).allSatisfy((key) -> assertThat(key.length()).isLessThanOrEqualTo(137));
		}
	}

	private static String shown(String identity) {
		return (identity.length() > 40) ? identity.substring(0, 40) + "... (" + identity.length() + " chars)"
				: identity.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\u0000", "\\0");
	}

}
