package io.github.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.servlet.RateLimitFilter;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Configuration of rate limiting, under the prefix {@code ratelimit}. Bound once, before any other bean is created,
 * by {@code RateLimitPropertiesCheck}, which also refuses a name under {@code ratelimit.} that no property here has
 * and every invalid value. Not {@code ignoreUnknownFields = false}: Spring Boot's check behind it refuses valid lists
 * that another source replaces (see {@code UnknownNamesBindHandler}).
 */
@ConfigurationProperties(prefix = "ratelimit")
public class RateLimitProperties {

	/** Whether rate limiting is enabled. */
	private boolean enabled = true;

	/** Prefix of every Redis key the limiter writes. No spaces or braces. */
	private String keyPrefix = RateLimitKeys.DEFAULT_PREFIX;

	/** Rate-limit policies by name. */
	private Map<String, PolicyProperties> policies = new LinkedHashMap<>();

	/**
	 * What a policy does when Redis cannot decide (down, frozen, slower than ratelimit.redis.timeout, or the circuit
	 * breaker open), unless the policy sets its own: open (the request goes through unchecked), closed (refused with
	 * 503) or local (enforced in this instance's memory with the same algorithm).
	 */
	private FailureMode failureMode = FailureMode.OPEN;

	@NestedConfigurationProperty
	private final RedisBackendProperties redis = new RedisBackendProperties();

	private final Health health = new Health();

	private final Local local = new Local();

	private final Overrides overrides = new Overrides();

	private final Gateway gateway = new Gateway();

	private final Filter filter = new Filter();

	private final Headers headers = new Headers();

	private final Problem problem = new Problem();

	private final Ip ip = new Ip();

	public Ip getIp() {
		return this.ip;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Map<String, PolicyProperties> getPolicies() {
		return this.policies;
	}

	/**
	 * The {@code max-wait} of a configured policy.
	 * @param policy the policy name
	 * @return its longest wait, or null when no such policy is configured
	 */
	public @Nullable Duration maxWait(String policy) {
		PolicyProperties configured = this.policies.get(policy);
		return (configured != null) ? configured.getMaxWait() : null;
	}

	public void setPolicies(Map<String, PolicyProperties> policies) {
		this.policies = policies;
	}

	public FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public RedisBackendProperties getRedis() {
		return this.redis;
	}

	public Health getHealth() {
		return this.health;
	}

	public Local getLocal() {
		return this.local;
	}

	public Overrides getOverrides() {
		return this.overrides;
	}

	public Gateway getGateway() {
		return this.gateway;
	}

	/** The {@code ratelimit} health contributor (with Spring Boot Actuator). */
	public static class Health {

		/**
		 * Whether the contributor reports DOWN while decisions are degraded (Redis failing, or the circuit open). Off
		 * by default:
		 * the failure modes exist so that the application keeps serving while Redis is down.
		 */
		private boolean downWhenDegraded = false;

		public boolean isDownWhenDegraded() {
			return this.downWhenDegraded;
		}

		public void setDownWhenDegraded(boolean downWhenDegraded) {
			this.downWhenDegraded = downWhenDegraded;
		}

	}

	public Filter getFilter() {
		return this.filter;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public Problem getProblem() {
		return this.problem;
	}

	/** The servlet filter and WebFlux filter that apply the rules. */
	public static class Filter {

		/** Whether the filter is registered. */
		private boolean enabled = true;

		/**
		 * Order of the filter. Spring Security's filter chain runs at -100: the default -90 runs after it, so the
		 * principal is known; set it below -100 to limit before authentication (e.g. per IP against credential
		 * stuffing).
		 */
		private int order = RateLimitFilter.DEFAULT_ORDER; // of both filters; a constant, compiled in

		/**
		 * Rules: which policies apply to which paths and methods.
		 */
		private List<Rule> rules = new ArrayList<>();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

		public List<Rule> getRules() {
			return this.rules;
		}

		public void setRules(List<Rule> rules) {
			this.rules = rules;
		}

	}

	/** One filter rule. */
	public static class Rule {

		/** Path patterns (Spring PathPattern syntax, e.g. /api/**). */
		private List<String> paths = new ArrayList<>();

		/** HTTP methods; empty for all. */
		private Set<String> methods = new LinkedHashSet<>();

		/** Names of the policies that apply. */
		private List<String> policies = new ArrayList<>();

		public List<String> getPaths() {
			return this.paths;
		}

		public void setPaths(List<String> paths) {
			this.paths = paths;
		}

		public Set<String> getMethods() {
			return this.methods;
		}

		public void setMethods(Set<String> methods) {
			this.methods = methods;
		}

		public List<String> getPolicies() {
			return this.policies;
		}

		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

	}

	/** How the ip key groups client addresses. */
	public static class Ip {

		/** Prefix length that groups IPv4 clients: 32 counts each address, 24 a whole /24. */
		private int ipv4Prefix = 32;

		/**
		 * Prefix length that groups IPv6 clients: one client typically holds a whole /64, so 64 keeps it from
		 * rotating addresses for fresh quota.
		 */
		private int ipv6Prefix = 64;

		public int getIpv4Prefix() {
			return this.ipv4Prefix;
		}

		public void setIpv4Prefix(int ipv4Prefix) {
			this.ipv4Prefix = ipv4Prefix;
		}

		public int getIpv6Prefix() {
			return this.ipv6Prefix;
		}

		public void setIpv6Prefix(int ipv6Prefix) {
			this.ipv6Prefix = ipv6Prefix;
		}

	}

	/** Which rate-limit headers responses carry. */
	public static class Headers {

		/** Whether to send X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset. */
		private boolean legacy = true;

		/** Whether to send the IETF RateLimit and RateLimit-Policy headers. */
		private boolean standard = true;

		/** Whether to send Retry-After on 429 responses. */
		private boolean retryAfter = true;

		/**
		 * Secret of the keyed hash (HmacSHA256) sent as the partition key pk of RateLimit and RateLimit-Policy, so a
		 * client can tell which quota partition counted it without learning the identity. No pk when unset. Keep it
		 * the same on every instance.
		 */
		private @Nullable String partitionKeySecret;

		public @Nullable String getPartitionKeySecret() {
			return this.partitionKeySecret;
		}

		public void setPartitionKeySecret(@Nullable String partitionKeySecret) {
			this.partitionKeySecret = partitionKeySecret;
		}

		public boolean isLegacy() {
			return this.legacy;
		}

		public void setLegacy(boolean legacy) {
			this.legacy = legacy;
		}

		public boolean isStandard() {
			return this.standard;
		}

		public void setStandard(boolean standard) {
			this.standard = standard;
		}

		public boolean isRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(boolean retryAfter) {
			this.retryAfter = retryAfter;
		}

	}

	/** The RFC 9457 problem body of 429 responses. */
	public static class Problem {

		/**
		 * The problem type URI of a 429: by default the quota-exceeded type of the IETF rate-limit headers draft
		 * (its title and violated-policies member), about:blank for the plain status, or a type of your own.
		 */
		private URI type = URI.create(ProblemDetailRejectionHandler.QUOTA_EXCEEDED);

		public URI getType() {
			return this.type;
		}

		public void setType(URI type) {
			this.type = type;
		}

	}

	/**
	 * Spring Cloud Gateway routes (the ratelimit-spring-cloud-gateway module); declared here so that every name under
	 * ratelimit. is checked in one place.
	 */
	public static class Gateway {

		/**
		 * Policies (names under ratelimit.policies) checked for the routes whose RequestRateLimiter filter names none
		 * in its ratelimit.policies argument.
		 */
		private List<String> defaultPolicies = new ArrayList<>();

		public List<String> getDefaultPolicies() {
			return this.defaultPolicies;
		}

		public void setDefaultPolicies(List<String> defaultPolicies) {
			this.defaultPolicies = defaultPolicies;
		}

	}

	/** The in-memory backend, used when the application has no Redis connection. */
	public static class Local {

		/** Most keys kept in memory; the least used beyond it are forgotten. */
		private long maximumKeys = LocalRateLimitBackend.DEFAULT_MAXIMUM_KEYS;

		public long getMaximumKeys() {
			return this.maximumKeys;
		}

		public void setMaximumKeys(long maximumKeys) {
			this.maximumKeys = maximumKeys;
		}

	}

	/** Runtime overrides, set through the {@code ratelimits} Actuator endpoint. */
	public static class Overrides {

		/**
		 * How often every instance reads the runtime overrides from Redis again, whatever it was told: the longest
		 * an instance that missed a change notification takes to apply it.
		 */
		private Duration reconcileInterval = Duration.ofSeconds(1);

		public Duration getReconcileInterval() {
			return this.reconcileInterval;
		}

		public void setReconcileInterval(Duration reconcileInterval) {
			this.reconcileInterval = reconcileInterval;
		}

	}

}
