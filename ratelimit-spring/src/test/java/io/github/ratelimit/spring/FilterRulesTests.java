package io.github.ratelimit.spring;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.RequestPath;

import static io.github.ratelimit.spring.RateLimitEnforcerTests.IP;
import static io.github.ratelimit.spring.RateLimitEnforcerTests.policy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FilterRulesTests {

	private static FilterRules rules(List<ConfiguredPolicy> policies, List<RateLimitRule> rules) {
		return new FilterRules(new RateLimitPolicyRegistry(policies), rules);
	}

	private static List<String> names(List<RateLimitEnforcer.Target> targets) {
		return targets.stream().map((target) -> target.policy().name()).toList();
	}

	@Test
	void rulesMatchPathsAndMethodsAndListEachPolicyOnce() {
		ConfiguredPolicy perIp = ConfiguredPolicy.of(policy("per-ip", 10), IP, MissingKey.SHARED);
		ConfiguredPolicy writes = ConfiguredPolicy.of(policy("writes", 2), IP, MissingKey.SHARED);
		FilterRules rules = rules(List.of(perIp, writes),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of(), List.of("per-ip")),
						RateLimitRule.of(List.of("/api/orders/{id}", "/api/carts/**"), Set.of("post", "PUT"),
								List.of("writes", "per-ip"))));
		assertThat(names(rules.targets("GET", "/api/orders/1"))).containsExactly("per-ip");
		assertThat(names(rules.targets("POST", "/api/orders/1"))).containsExactly("per-ip", "writes");
		assertThat(names(rules.targets("put", "/api/carts/9/items"))).containsExactly("per-ip", "writes");
		assertThat(rules.targets("GET", "/health")).isEmpty();
	}

	@Test
	void rulesNamingUnknownPoliciesAreRejected() {
		// the auto-configuration names the property (ratelimit.filter.rules[i].policies) before it builds an enforcer
		assertThatIllegalArgumentException()
			.isThrownBy(() -> rules(List.of(), List.of(RateLimitRule.of(List.of("/**"), Set.of(), List.of("nope")))))
			.withMessageContaining("'nope'");
	}

	@Test
	void headIsCoveredByGetRulesAndDoubledSlashesMatchAsSingleOnes() {
		FilterRules rules = rules(List.of(ConfiguredPolicy.of(policy("p", 5), IP, MissingKey.SHARED)),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of("GET"), List.of("p"))));
		assertThat(rules.targets("HEAD", "/api/hello")).hasSize(1);
		assertThat(rules.targets("POST", "/api/hello")).isEmpty();
		assertThat(rules.targets("GET", "//api//hello")).hasSize(1);
	}

	@Test
	void aPathSpringParsedMatchesAsItsTextAndEachRuleListsItsTargetsOnce() {
		FilterRules rules = rules(List.of(ConfiguredPolicy.of(policy("p", 5), IP, MissingKey.SHARED)),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of("GET"), List.of("p", "p"))));
		assertThat(names(rules.targets("GET", RequestPath.parse("/app/api/hello", "/app").pathWithinApplication())))
			.containsExactly("p");
		assertThat(rules.targets("GET", RequestPath.parse("/app//api//hello", "/app").pathWithinApplication()))
			.hasSize(1);
		assertThat(rules.targets("GET", RequestPath.parse("/app/other", "/app").pathWithinApplication())).isEmpty();
		// made at startup: every request matching the rule gets the same list
		assertThat(rules.targets("GET", "/api/a")).isSameAs(rules.targets("GET", "/api/b"));
	}

}
