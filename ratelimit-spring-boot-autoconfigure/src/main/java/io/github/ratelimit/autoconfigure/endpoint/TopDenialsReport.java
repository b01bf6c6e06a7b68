package io.github.ratelimit.autoconfigure.endpoint;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.MissingKey;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.spring.TopDenialsSource;
import org.jspecify.annotations.Nullable;

/**
 * The answers of {@code top}: each policy's most refused identities over the window (every instance's, through
 * Redis), with their denials, their share of the policy's denials, and their remaining quota and reset read through
 * the backend's inspect (for the listed identities only, taking nothing).
 */
final class TopDenialsReport {

	/** How many identities a policy's answer lists. */
	static final int LISTED = 10;

	private final RateLimitPolicyRegistry registry;

	private final RateLimitBackend backend;

	private final TopDenialsSource source;

	private final boolean digestOnly;

	TopDenialsReport(RateLimitPolicyRegistry registry, RateLimitBackend backend, TopDenialsSource source,
			boolean digestOnly) {
		this.registry = registry;
		this.backend = backend;
		this.source = source;
		this.digestOnly = digestOnly;
	}

	/** {@return every policy with denials in the window, by name} */
	Map<String, Object> fleet() {
		TreeSet<String> names = new TreeSet<>(this.registry.names());
		names.addAll(this.source.policies());
		Map<String, Object> policies = new LinkedHashMap<>();
		for (String name : names) {
			TopDenials.Summary summary = this.source.summary(name);
			if (summary.denials() > 0 || !summary.identities().isEmpty()) {
				policies.put(name, describe(name, summary));
			}
		}
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("digestOnly", this.digestOnly);
		answer.put("policies", policies);
		return answer;
	}

	/** {@return one policy's answer} */
	Map<String, Object> policy(String policy) {
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("policy", policy);
		answer.put("digestOnly", this.digestOnly);
		answer.putAll(describe(policy, this.source.summary(policy)));
		return answer;
	}

	private Map<String, Object> describe(String policy, TopDenials.Summary summary) {
		Map<String, Object> described = new LinkedHashMap<>();
		described.put("denials", summary.denials());
		described.put("instances", summary.instances());
		List<Map<String, Object>> top = new ArrayList<>();
		ConfiguredPolicy configured = this.registry.find(policy);
		summary.identities().entrySet().stream().limit(LISTED).forEach((entry) -> {
			Map<String, Object> identity = new LinkedHashMap<>();
			identity.put("identity", shown(entry.getKey()));
			identity.put("denials", entry.getValue());
			identity.put("share", (summary.denials() > 0)
					? Math.min(1.0, entry.getValue() / (double) summary.denials()) : 0.0);
			if (configured != null) {
				identity.putAll(state(configured, entry.getKey(), summary.tiers().get(entry.getKey())));
			}
			top.add(identity);
		});
		described.put("top", top);
		return described;
	}

	/**
	 * An identity as shown: its digest, unless its source cannot carry a secret ({@code ip}, {@code principal},
	 * {@code global}, no key) and digests are not asked for everywhere. A header, a bean's or an expression's value
	 * may be an API key or a token. One the limiter keeps as a digest already is shown as it is.
	 */
	static String shown(String identity, boolean digestOnly) {
		if (identity.startsWith("~")) {
			return identity;
		}
		int colon = identity.indexOf(':');
		String source = (colon > 0) ? identity.substring(0, colon) : identity;
		boolean plain = source.equals("ip") || source.equals("principal") || identity.equals(KeySpec.GLOBAL)
				|| identity.equals(MissingKey.ANONYMOUS);
		return (plain && !digestOnly) ? identity : RateLimitKeys.digest(identity);
	}

	private String shown(String identity) {
		return shown(identity, this.digestOnly);
	}

	/**
	 * The identity's remaining quota and reset under the limits that refused it: its tier's (the tier recorded with
	 * the denial), then the overrides. An identity kept as a digest cannot be looked up.
	 */
	private Map<String, Object> state(ConfiguredPolicy configured, String identity, @Nullable String tier) {
		if (identity.startsWith("~")) {
			return Map.of("state", "unknown (the identity is kept as its digest)");
		}
		int colon = identity.indexOf(':');
		String source = (colon > 0) ? identity.substring(0, colon) : null;
		String overrideKey = (source != null && KeySpec.isSource(source))
				? configured.overrideKey(source, identity.substring(colon + 1), identity) : identity;
		RateLimitPolicy policy = this.registry.effectiveInTier(configured, overrideKey, tier);
		try {
			PolicyDecision state = this.backend.inspect(RateLimitRequest.of(policy, identity)).get(0);
			return Map.of("remaining", state.remaining(), "resetAfter", state.resetAfter());
		}
		catch (RuntimeException ex) {
			return Map.of("state", "unavailable (" + ex.getClass().getSimpleName() + ")");
		}
	}

}
