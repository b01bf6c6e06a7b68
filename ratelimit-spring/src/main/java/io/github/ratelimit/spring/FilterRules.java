package io.github.ratelimit.spring;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.springframework.http.server.PathContainer;

/** The filter rules ({@code ratelimit.filter.rules}): which configured policies apply to a method and path. */
final class FilterRules {

	private final RateLimitPolicyRegistry policies;

	private final List<RateLimitRule> rules;

	/** Throws {@link IllegalArgumentException} when a rule names an unknown policy. */
	FilterRules(RateLimitPolicyRegistry policies, List<RateLimitRule> rules) {
		for (RateLimitRule rule : rules) {
			// fails here rather than on the first request the rule matches
			rule.policies().forEach(policies::configured);
		}
		this.policies = policies;
		this.rules = List.copyOf(rules);
	}

	/** The policies of the rules matching a request, each once, in rule order. */
	List<RateLimitEnforcer.Target> targets(String method, String path) {
		if (this.rules.isEmpty()) {
			return List.of();
		}
		// "//api/x" reaches the same handler as "/api/x" under some matching strategies: match it the same way
		PathContainer container = PathContainer.parsePath(path.contains("//") ? path.replaceAll("/{2,}", "/") : path);
		Set<String> names = new LinkedHashSet<>();
		for (RateLimitRule rule : this.rules) {
			if (rule.matches(method, container)) {
				names.addAll(rule.policies());
			}
		}
		return names.stream()
			.map((name) -> new RateLimitEnforcer.Target(this.policies.configured(name), null, 0))
			.toList();
	}

}
