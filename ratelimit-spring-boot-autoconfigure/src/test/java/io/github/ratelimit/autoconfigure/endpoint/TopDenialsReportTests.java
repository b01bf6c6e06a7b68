package io.github.ratelimit.autoconfigure.endpoint;

import io.github.ratelimit.core.RateLimitKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@code top} shows an identity: raw only for sources that cannot carry a secret, a digest for the others (a
 * header, a bean's or an expression's value may be an API key), a digest for all in digest-only mode.
 */
class TopDenialsReportTests {

	@Test
	void onlyIdentitiesOfSourcesWithoutSecretsAreShownRaw() {
		for (String plain : new String[] { "ip:192.0.2.1", "principal:alice", "global", "anonymous" }) {
			assertThat(TopDenialsReport.shown(plain, false)).isEqualTo(plain);
			assertThat(TopDenialsReport.shown(plain, true)).isEqualTo(RateLimitKeys.digest(plain));
		}
		for (String secret : new String[] { "header.x-api-key:k-1", "el.0123abcd:token", "bean.tenants:t-1", "k-1" }) {
			assertThat(TopDenialsReport.shown(secret, false)).isEqualTo(RateLimitKeys.digest(secret));
		}
	}

	@Test
	void anIdentityTheLimiterKeepsAsADigestIsShownAsItIs() {
		String stored = RateLimitKeys.safeIdentity("header.x-api-key:" + "k".repeat(100));
		assertThat(TopDenialsReport.shown(stored, false)).isEqualTo(stored);
		assertThat(TopDenialsReport.shown(stored, true)).isEqualTo(stored);
	}

}
