package io.github.ratelimit.it.support;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shadow mode over HTTP: a policy being tried out never denies, never shows in the response, takes nothing from the
 * enforced policy's quota, and its would-be denials are counted as {@code outcome="shadow_denied"}. The application
 * maps {@code /shadow/rule} to a filter rule with {@code shadow-enforced} (limit 5, keyed by {@code X-Client}) and
 * {@code shadow-trial} (limit 2, {@code shadow: true}), and {@code /shadow/method/{id}} to a handler annotated
 * {@code @RateLimited(name = "trial-inline", limit = 1, key = "#id", shadow = true)}.
 */
public final class ShadowScenarios {

	private ShadowScenarios() {
	}

	/**
	 * Six requests of one client on the rule: the enforced limit alone decides.
	 * @param http the application
	 */
	public static void aShadowPolicyOnARuleNeverDeniesAndIsCountedApart(HttpGet http) {
		double before = PrometheusScrape.decisions(http, "shadow_denied", "shadow-trial");
		List<Integer> statuses = new ArrayList<>();
		List<String> remaining = new ArrayList<>();
		String deniedBody = null;
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> response = http.get("/shadow/rule", "shadowed");
			statuses.add(response.statusCode());
			remaining.add(response.headers().firstValue("X-RateLimit-Remaining").orElse("none"));
			assertThat(response.headers().allValues("RateLimit-Policy")).noneMatch((v) -> v.contains("shadow-trial"));
			assertThat(response.headers().allValues("RateLimit")).noneMatch((v) -> v.contains("shadow-trial"));
			if (response.statusCode() == 429) {
				deniedBody = response.body();
			}
		}
		// the trial limit (2) would have denied from the third request: the enforced limit (5) alone decides
		assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
		assertThat(remaining).containsExactly("4", "3", "2", "1", "0", "0");
		assertThat(deniedBody).contains("shadow-enforced").doesNotContain("shadow-trial");
		// requests 3 to 6 (the sixth was decided by both policies, apart)
		assertThat(PrometheusScrape.decisions(http, "shadow_denied", "shadow-trial") - before).isEqualTo(4.0);
		assertThat(PrometheusScrape.decisions(http, "denied", "shadow-trial")).isZero();
	}

	/**
	 * Three requests on the shadow-annotated handler: all admitted, two counted as shadow denials.
	 * @param http the application
	 */
	public static void aShadowAnnotationNeverDeniesAndIsCountedApart(HttpGet http) {
		double before = PrometheusScrape.decisions(http, "shadow_denied", "trial-inline");
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = http.get("/shadow/method/42", "anyone");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
		assertThat(PrometheusScrape.decisions(http, "shadow_denied", "trial-inline") - before).isEqualTo(2.0);
		assertThat(PrometheusScrape.decisions(http, "allowed", "trial-inline")).isGreaterThanOrEqualTo(1.0);
	}

}
