package io.github.ratelimit.spring;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.http.server.PathContainer;

/** The filter rules ({@code ratelimit.filter.rules}): which configured policies apply to a method and path. */
final class FilterRules {

	private final List<RateLimitRule> rules;

	/** Each rule's targets, its policies each once: made at startup, not per request. */
	private final List<List<RateLimitEnforcer.Target>> targets;

	/** Throws {@link IllegalArgumentException} when a rule names an unknown policy. */
	FilterRules(RateLimitPolicyRegistry policies, List<RateLimitRule> rules) {
		List<List<RateLimitEnforcer.Target>> targets = new ArrayList<>();
		for (RateLimitRule rule : rules) {
			// fails here rather than on the first request the rule matches
			targets.add(rule.policies()
				.stream()
				.distinct()
				.map((name) -> new RateLimitEnforcer.Target(policies.configured(name), null, 0))
				.toList());
		}
		this.rules = List.copyOf(rules);
		this.targets = List.copyOf(targets);
	}

	/** The policies of the rules matching a request, each once, in rule order. */
	List<RateLimitEnforcer.Target> targets(String method, String path) {
		if (this.rules.isEmpty()) {
			return List.of();
		}
		return targets(method, PathContainer.parsePath(path));
	}

	/** {@link #targets(String, String)} of a path parsed already (as Spring parses a request's). */
	List<RateLimitEnforcer.Target> targets(String method, PathContainer path) {
		if (this.rules.isEmpty()) {
			return List.of();
		}
		// "//api/x" reaches the same handler as "/api/x" under some matching strategies: match it the same way
		String value = path.value();
		PathContainer container = value.contains("//") ? PathContainer.parsePath(value.replaceAll("/{2,}", "/"))
				: path;
		List<RateLimitEnforcer.Target> found = null;
		// by policy name, as the rules name them (a target's own equality would hash every override of its policy)
		Map<String, RateLimitEnforcer.Target> merged = null;
		for (int i = 0; i < this.rules.size(); i++) {
			if (!this.rules.get(i).matches(method, container)) {
				continue;
			}
			if (found == null) {
				found = this.targets.get(i); // the usual case, one rule: its list as it is
			}
			else {
				if (merged == null) {
					merged = new LinkedHashMap<>();
					putEach(merged, found);
				}
				putEach(merged, this.targets.get(i));
			}
		}
		if (merged != null) {
			return List.copyOf(merged.values());
		}
		return (found != null) ? found : List.of();
	}

	/** Adds the targets whose policy is not in yet, in order. */
	private static void putEach(Map<String, RateLimitEnforcer.Target> byName, List<RateLimitEnforcer.Target> targets) {
		for (RateLimitEnforcer.Target target : targets) {
			byName.putIfAbsent(target.policy().name(), target);
		}
	}

}
