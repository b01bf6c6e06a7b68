package io.github.ratelimit.autoconfigure.endpoint;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RuntimeOverride;
import io.github.ratelimit.spring.TopDenialsSource;
import io.github.ratelimit.spring.client.RateLimitedClients;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code ratelimits} Actuator endpoint: policies, an identity's usage (taking nothing), resets and runtime
 * overrides, and the most refused identities per policy ({@code top}). Writes need {@code management.endpoint.ratelimits.access=unrestricted}, act on every instance and are
 * logged at INFO with who, old and new value. An identity is a {@code key} value qualified by the policy's key's
 * source, or by {@code source} (e.g. {@code bean.gateway-key-resolver}; overrides then go by
 * {@link ConfiguredPolicy#overrideKey}). A null override argument keeps what is set; durations read as {@code 500ms},
 * {@code 1m} or {@code PT1H}. A refused request throws {@link InvalidEndpointRequestException} with the reason.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

	private static final Log logger = LogFactory.getLog(RateLimitsEndpoint.class);

	/** The selector of the top denials' operations. */
	private static final String TOP = "top";

	/** The selector of the rate-limited partners' known quotas. */
	private static final String PARTNERS = "partners";

	private final RateLimitPolicyRegistry registry;

	private final RateLimitBackend backend;

	private final @Nullable TopDenialsReport top;

	private @Nullable RateLimitedClients clients;

	public RateLimitsEndpoint(RateLimitPolicyRegistry registry, RateLimitBackend backend) {
		this(registry, backend, null, false);
	}

	/**
	 * An endpoint that also answers {@code top} from {@code topDenials} (null: top denials are off).
	 * @param digestOnly whether {@code top} shows digests of the identities instead of the identities
	 */
	public RateLimitsEndpoint(RateLimitPolicyRegistry registry, RateLimitBackend backend,
			@Nullable TopDenialsSource topDenials, boolean digestOnly) {
		this.registry = registry;
		this.backend = backend;
		this.top = (topDenials != null) ? new TopDenialsReport(registry, backend, topDenials, digestOnly) : null;
	}

	/** @return whether policies are enforced, and every policy by name with its settings, tiers and overrides */
	@ReadOperation
	public Map<String, Object> policies() {
		Map<String, Object> policies = new LinkedHashMap<>();
		RateLimitOverrides overrides = this.registry.overrides();
		for (ConfiguredPolicy configured : this.registry.all()) {
			Map<String, Object> described = new LinkedHashMap<>(settings(configured.policy()));
			described.put("key", configured.key().toString());
			described.put("missingKey", configured.missingKey().name().toLowerCase(Locale.ROOT));
			described.put("tiers", settings(configured.tiers()));
			described.put("overrides", settings(configured.overrides()));
			Map<String, Object> runtime = new LinkedHashMap<>();
			RuntimeOverride whole = overrides.of(configured.name());
			runtime.put("policy", (whole != null) ? whole.values() : Map.of());
			Map<String, Object> identities = new LinkedHashMap<>();
			overrides.identities(configured.name()).forEach((identity, override) -> identities.put(identity,
					override.values()));
			runtime.put("identities", identities);
			described.put("runtimeOverrides", runtime);
			described.put("enforced", overrides.enforced(configured.name()));
			policies.put(configured.name(), described);
		}
		RuntimeOverride all = overrides.of(RateLimitOverrides.ALL);
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("enabled", all == null || !all.disables());
		answer.put("policies", policies);
		return answer;
	}

	/**
	 * The kill switch of every policy: false lets requests pass unchecked and uncounted, true enforces again.
	 * @param enabled whether policies are enforced
	 * @return the state now
	 */
	@WriteOperation
	public Map<String, Object> switchAll(boolean enabled, SecurityContext security) {
		RateLimitOverrides overrides = this.registry.overrides();
		RuntimeOverride old = overrides.of(RateLimitOverrides.ALL);
		RuntimeOverride now = new RuntimeOverride(null, null, null, null, enabled);
		overrides.set(RateLimitOverrides.ALL, null, now);
		log(security, "switched enforcement of every policy " + (enabled ? "on" : "off"), old, now);
		return Map.of("enabled", enabled);
	}

	/**
	 * Answers {@code partners} from these outgoing clients' partners.
	 * @param clients the rate-limited partners of {@code ratelimit.client.partners}
	 */
	public void partners(RateLimitedClients clients) {
		this.clients = clients;
	}

	/**
	 * {@code GET ratelimits/top}: every policy's most refused identities over the window, fleet-wide;
	 * {@code GET ratelimits/partners}: the rate-limited partners' last known quotas.
	 * @param operation {@code top} or {@code partners}; anything else is not found
	 * @return the policies with denials and their top identities, the partners, or null (404)
	 */
	@ReadOperation
	public @Nullable Map<String, Object> fleetTop(@Selector String operation) {
		if (PARTNERS.equals(operation)) {
			return (this.clients != null) ? this.clients.known() : Map.of();
		}
		if (!TOP.equals(operation)) {
			return null;
		}
		return (this.top != null) ? this.top.fleet() : Map.of("enabled", false);
	}

	/**
	 * One identity's usage of a policy, as a request of the policy's cost would see it now, taking nothing; for the
	 * key {@code top} without a source, the policy's most refused identities instead ({@code ratelimits/{policy}/top};
	 * the usage of a value {@code top} is asked with the policy's key's source).
	 * @param policy the policy name
	 * @param key the value of the identity
	 * @param source the source of the value, or null for the policy's own key
	 * @return the usage, or null (404) for an unknown policy
	 */
	@ReadOperation
	public @Nullable Map<String, Object> usage(@Selector String policy, @Selector String key,
			@Nullable String source) {
		ConfiguredPolicy configured = this.registry.find(policy);
		if (configured == null) {
			return null;
		}
		if (TOP.equals(key) && source == null) {
			return (this.top != null) ? this.top.policy(policy) : Map.of("policy", policy, "enabled", false);
		}
		Addressed addressed = Addressed.of(configured, key, source);
		RateLimitPolicy effective = effective(configured, addressed);
		PolicyDecision state = this.backend.inspect(RateLimitRequest.of(effective, addressed.identity())).get(0);
		Map<String, Object> usage = addressed.describe(policy);
		usage.put("algorithm", effective.algorithm().id());
		usage.put("limit", effective.limit());
		usage.put("window", effective.window());
		usage.put("remaining", state.remaining());
		usage.put("resetAfter", state.resetAfter());
		usage.put("allowed", state.allowed());
		usage.put("retryAfter", state.retryAfter());
		return usage;
	}

	/**
	 * Resets one identity's state (announced to every instance's denial cache), or with {@code override=true}
	 * removes its runtime override instead.
	 * @param policy the policy name
	 * @param key the value of the identity
	 * @param override whether to remove the identity's runtime override rather than its state
	 * @param source the source of the value, or null for the policy's own key
	 * @return what was done
	 */
	@DeleteOperation
	public Map<String, Object> reset(@Selector String policy, @Selector String key, @Nullable Boolean override,
			@Nullable String source, SecurityContext security) {
		ConfiguredPolicy configured = known(policy);
		Addressed addressed = Addressed.of(configured, key, source);
		Map<String, Object> answer = addressed.describe(policy);
		if (Boolean.TRUE.equals(override)) {
			answer.put("overrideRemoved", removeOverride(policy, addressed.overrideKey(), security));
			return answer;
		}
		RateLimitRequest request = RateLimitRequest.of(effective(configured, addressed), addressed.identity());
		String before = stateBefore(request);
		this.backend.reset(request.entries());
		this.registry.overrides().announceReset(policy, addressed.identity());
		log(security, "reset identity '" + addressed.identity() + "' of policy '" + policy + "' (before: " + before
				+ ", after: full quota)");
		answer.put("reset", true);
		return answer;
	}

	/**
	 * Sets the runtime override of a whole policy.
	 * @param policy the policy name
	 * @param enabled false to switch the policy's enforcement off (its kill switch), true back on
	 * @return the override and the policy it makes
	 */
	@WriteOperation
	public Map<String, Object> overridePolicy(@Selector String policy, @Nullable Long limit, @Nullable String window,
			@Nullable Long burst, @Nullable String minInterval, @Nullable Boolean enabled, SecurityContext security) {
		return override(policy, null, limit, window, burst, minInterval, enabled, security);
	}

	/**
	 * Sets the runtime override of one identity of a policy (an enterprise customer): {@link #overridePolicy} for
	 * the identity {@code key} and {@code source} name, as in {@link #usage}.
	 * @param policy the policy name
	 * @param key the value of the identity
	 * @param source the source of the value, or null for the policy's own key
	 * @return the override and the policy it makes
	 */
	@WriteOperation
	public Map<String, Object> overrideKey(@Selector String policy, @Selector String key, @Nullable Long limit,
			@Nullable String window, @Nullable Long burst, @Nullable String minInterval, @Nullable String source,
			SecurityContext security) {
		return override(policy, Addressed.of(known(policy), key, source), limit, window, burst, minInterval, null,
				security);
	}

	/**
	 * Removes the runtime override of a whole policy.
	 * @param policy the policy name
	 * @return what was done
	 */
	@DeleteOperation
	public Map<String, Object> removeOverride(@Selector String policy, SecurityContext security) {
		known(policy);
		return Map.of("policy", policy, "overrideRemoved", removeOverride(policy, null, security));
	}

	private boolean removeOverride(String policy, @Nullable String key, SecurityContext security) {
		RateLimitOverrides overrides = this.registry.overrides();
		RuntimeOverride old = (key != null) ? overrides.identities(policy).get(key) : overrides.of(policy);
		boolean removed = overrides.remove(policy, key);
		log(security, "removed the runtime override of policy '" + policy + "'" + forKey(key), old, null);
		return removed;
	}

	private static String forKey(@Nullable String key) {
		return (key != null) ? " for key '" + key + "'" : "";
	}

	private Map<String, Object> override(String policy, @Nullable Addressed addressed, @Nullable Long limit,
			@Nullable String window, @Nullable Long burst, @Nullable String minInterval, @Nullable Boolean enabled,
			SecurityContext security) {
		ConfiguredPolicy configured = known(policy);
		RateLimitOverrides overrides = this.registry.overrides();
		String key = (addressed != null) ? addressed.overrideKey() : null;
		RuntimeOverride old = (key != null) ? overrides.identities(policy).get(key) : overrides.of(policy);
		if (limit == null && window == null && burst == null && minInterval == null && enabled == null) {
			throw invalid("Set at least one of limit, window, burst, minInterval"
					+ ((key == null) ? ", enabled" : ""));
		}
		RuntimeOverride override;
		RateLimitPolicy result;
		try {
			Limits limits = new Limits(limit, (window != null) ? RuntimeOverride.duration("window", window) : null,
					burst, (minInterval != null) ? RuntimeOverride.duration("minInterval", minInterval) : null);
			// a write changes what it sets and keeps the rest of the override already there
			if (old != null) {
				limits = limits.orElse(old.limits());
				enabled = (enabled != null) ? enabled : old.enabled();
			}
			override = new RuntimeOverride(limits.limit(), limits.window(), limits.burst(), limits.minInterval(),
					enabled);
			// checked against every policy it will apply to: the base, the tiers and the configured overrides
			result = configured.policy().with(override.limits());
			Stream.concat(configured.tiers().values().stream(), configured.overrides().values().stream())
				.forEach((variant) -> variant.with(override.limits()));
		}
		catch (InvalidPolicyException ex) {
			throw invalid("Invalid override of policy '" + policy + "': " + ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			throw invalid(String.valueOf(ex.getMessage()));
		}
		overrides.set(policy, key, override);
		log(security, "set the runtime override of policy '" + policy + "'" + forKey(key), old, override);
		Map<String, Object> answer = (addressed != null) ? addressed.describe(policy) : new LinkedHashMap<>();
		answer.putIfAbsent("policy", policy);
		answer.put("override", override.values());
		answer.put("effective", settings(result));
		answer.put("enforced", overrides.enforced(policy));
		return answer;
	}

	private ConfiguredPolicy known(String policy) {
		ConfiguredPolicy configured = this.registry.find(policy);
		if (configured == null) {
			throw invalid("Unknown rate-limit policy '" + policy + "'; configured policies: " + this.registry.names());
		}
		return configured;
	}

	private RateLimitPolicy effective(ConfiguredPolicy configured, Addressed addressed) {
		return this.registry.effective(configured, addressed.overrideKey(), null);
	}

	/** An identity the endpoint names: the key as asked, the identity counted, what its overrides are looked up by. */
	private record Addressed(String key, String identity, String overrideKey) {

		/** The value qualified as the policy's own key qualifies it, or as a key of the given source does. */
		static Addressed of(ConfiguredPolicy configured, String key, @Nullable String source) {
			if (source == null) {
				return new Addressed(key, configured.key().identity(key), key);
			}
			if (!KeySpec.isSource(source)) {
				throw invalid("Invalid source '" + source + "': ip, principal, global, header.<name in lower case>, "
						+ "bean.<name> or el.<8 hex digits>, the part of a counted identity before its first ':'");
			}
			String identity = KeySpec.identity(source, key);
			return new Addressed(key, identity, configured.overrideKey(source, key, identity));
		}

		/** The start of an answer about this identity: the policy, the key as asked, the identity acted on. */
		Map<String, Object> describe(String policy) {
			Map<String, Object> answer = new LinkedHashMap<>();
			answer.put("policy", policy);
			answer.put("key", this.key);
			answer.put("identity", this.identity);
			return answer;
		}

	}

	private static InvalidEndpointRequestException invalid(String reason) {
		return new InvalidEndpointRequestException(reason, reason);
	}

	private static Map<String, Object> settings(Map<String, RateLimitPolicy> policies) {
		Map<String, Object> settings = new LinkedHashMap<>();
		policies.forEach((name, policy) -> settings.put(name, settings(policy)));
		return settings;
	}

	private static Map<String, Object> settings(RateLimitPolicy policy) {
		Map<String, Object> settings = new LinkedHashMap<>();
		settings.put("algorithm", policy.algorithm().id());
		settings.put("limit", policy.limit());
		settings.put("window", policy.window());
		if (policy.algorithm().supportsBurst()) {
			settings.put("burst", policy.burst());
		}
		if (policy.algorithm().supportsMinInterval() && !policy.minInterval().equals(Duration.ZERO)) {
			settings.put("minInterval", policy.minInterval());
		}
		settings.put("cost", policy.cost());
		settings.put("failureMode", policy.failureMode().id());
		settings.put("shadow", policy.shadow());
		return settings;
	}

	/** What an identity had left before a reset, for the log; never fails the reset. */
	private String stateBefore(RateLimitRequest request) {
		try {
			PolicyDecision state = this.backend.inspect(request).get(0);
			return state.remaining() + " of " + state.limit() + " remaining";
		}
		catch (RuntimeException ex) {
			return "unknown (" + ex.getClass().getSimpleName() + ")";
		}
	}

	private static void log(SecurityContext security, String what, @Nullable RuntimeOverride old,
			@Nullable RuntimeOverride now) {
		log(security, what + " (old: " + ((old != null) ? old.format() : "none") + ", new: "
				+ ((now != null) ? now.format() : "none") + ")");
	}

	private static void log(SecurityContext security, String what) {
		if (logger.isInfoEnabled()) {
			String who = (security.getPrincipal() != null) ? security.getPrincipal().getName() : "anonymous";
			logger.info("Rate limits: " + who + " " + what);
		}
	}

}
