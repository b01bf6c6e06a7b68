package io.github.ratelimit.test;

import java.util.LinkedHashSet;
import java.util.Set;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Resets and reads rate limits in tests, on any backend, without knowing how the state is stored; auto-configured
 * with the limiter. An identity is the value a policy's key resolves: the client address for {@code ip} (MockMvc's is
 * {@code 127.0.0.1}), a header's value, the principal's name. Policies are configured or inline {@code @RateLimited}
 * ones. Resets are announced to every instance's denial cache; runtime overrides stay.
 */
public class RateLimitTester {

	private final RateLimitBackend backend;

	private final RateLimitPolicyRegistry registry;

	public RateLimitTester(RateLimitBackend backend, RateLimitPolicyRegistry registry) {
		this.backend = backend;
		this.registry = registry;
	}

	/**
	 * Forgets every limit's state: every identity starts fresh under every policy.
	 * @return how many stored states were removed
	 */
	public long resetAll() {
		return resetMatching(null, null);
	}

	/**
	 * Forgets the state of every identity of one policy; other policies keep theirs.
	 * @param policy the policy name
	 * @return how many stored states were removed
	 */
	public long reset(String policy) {
		return resetMatching(policy, null);
	}

	/**
	 * Forgets the state of one identity of one policy (under the base policy, its tiers and overrides alike); other
	 * identities and policies keep theirs.
	 * @param policy the policy name
	 * @param identity the value the policy's key resolves
	 * @return how many stored states were removed
	 */
	public long reset(String policy, String identity) {
		ConfiguredPolicy configured = this.registry.find(policy);
		return resetMatching(policy, (configured != null) ? configured.key().identity(identity) : identity);
	}

	/**
	 * Forgets the state of one identity under every policy.
	 * @param identity the identity: a value as a policy's key resolves it (qualified by each configured key's
	 * source), or a stored identity as it is
	 * @return how many stored states were removed
	 */
	public long resetIdentity(String identity) {
		Set<String> identities = new LinkedHashSet<>();
		identities.add(identity);
		this.registry.all().forEach((configured) -> identities.add(configured.key().identity(identity)));
		long removed = 0;
		for (String stored : identities) {
			removed += resetMatching(null, stored);
		}
		return removed;
	}

	/** Removes the matching stored states and announces the reset to every instance's denial cache. */
	private long resetMatching(@Nullable String policy, @Nullable String identity) {
		long removed = this.backend.resetMatching(policy, identity);
		this.registry.overrides().announceReset(policy, identity);
		return removed;
	}

	/**
	 * The state of an identity under a policy as a request would see it now, taking nothing; with the identity's
	 * configured and runtime overrides applied, not a tier (which comes from a request).
	 * @param policy the policy name
	 * @param identity the value the policy's key resolves
	 * @return the state; {@link PolicyDecision#limit()} is the limit that applies
	 * @throws IllegalArgumentException naming the known policies when there is none of that name
	 */
	public PolicyDecision state(String policy, String identity) {
		ConfiguredPolicy configured = this.registry.find(policy);
		if (configured == null) {
			throw new IllegalArgumentException("Unknown rate-limit policy '" + policy + "'; configured policies: "
					+ this.registry.names() + " (an inline @RateLimited policy is known once its method is resolved:"
					+ " at startup for public methods, else after the first call)");
		}
		return this.backend
			.inspect(RateLimitRequest.of(this.registry.effective(configured, identity, null),
					configured.key().identity(identity)))
			.get(0);
	}

	/**
	 * The quota an identity has left under a policy: {@code state(policy, identity).remaining()}.
	 * @param policy the policy name
	 * @param identity the value the policy's key resolves
	 * @return the remaining quota
	 */
	public long remaining(String policy, String identity) {
		return state(policy, identity).remaining();
	}

}
