package io.github.ratelimit.autoconfigure;

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
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of rate limiting, under the prefix {@code ratelimit}. Bound once, before any other bean is created,
 * by {@code RateLimitPropertiesCheck}, which also refuses a name under {@code ratelimit.} that no property here has
 * and every invalid value. Not {@code ignoreUnknownFields = false}: Spring Boot's check behind it refuses valid lists
 * that another source replaces (see {@code UnknownNamesBindHandler}).
 */
@ConfigurationProperties(prefix = "ratelimit")
public class RateLimitProperties {

	/**
	 * Whether rate limiting is enabled.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every Redis key the limiter writes. No spaces or braces.
	 */
	private String keyPrefix = RateLimitKeys.DEFAULT_PREFIX;

	/**
	 * Rate-limit policies by name.
	 */
	private Map<String, PolicyProperties> policies = new LinkedHashMap<>();

	/**
	 * What a policy does when Redis cannot decide (down, frozen, slower than ratelimit.redis.timeout, or the circuit
	 * breaker open), unless the policy sets its own: open (the request goes through unchecked), closed (refused with
	 * 503) or local (enforced in this instance's memory with the same algorithm).
	 */
	private FailureMode failureMode = FailureMode.OPEN;

	private final Redis redis = new Redis();

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

	public Redis getRedis() {
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

	/**
	 * How the limiter talks to Redis: its time budget, its circuit breaker and the client's reconnects.
	 */
	public static class Redis {

		/**
		 * Longest a decision waits for Redis. Beyond it the decision is made by the policies' failure modes; the
		 * client's own command timeout (spring.data.redis.timeout) is never waited for.
		 */
		private Duration timeout = Duration.ofMillis(50);

		/**
		 * Longest delay between two reconnect attempts of the Lettuce client after Redis went away (Lettuce's own
		 * default grows to 30s, which would delay enforcement that long after Redis is back). Applied to the
		 * client resources Spring Boot creates; 0 leaves Lettuce's default.
		 */
		private Duration maxReconnectDelay = Duration.ofSeconds(1);

		/**
		 * Whether single-policy decisions are batched on a standalone or Sentinel Redis: while one script call is in
		 * flight on the connection, the decisions that arrive meanwhile go together as one call per policy once it
		 * answers (group commit: nothing waits for a batch to fill; each decision is still atomic and in arrival
		 * order). Shares Redis' per-call work and the client's per-command work between concurrent decisions. A
		 * Cluster never batches.
		 */
		private boolean batching = true;

		/**
		 * How the rate-limit scripts run on Redis: 'evalsha' (every Redis version; a server that lost its script
		 * cache, after a restart or a failover to a replica, answers each script's first call with NOSCRIPT and gets
		 * the script sent again) or 'functions' (Redis 7 or later and the Lettuce client: each script is loaded as a
		 * function library and called with FCALL; functions are persisted and replicated, so a promoted replica has
		 * them). 'functions' on a Redis older than 7 fails the start when Redis answers at startup, and every
		 * decision (logged once) otherwise.
		 */
		private ScriptMode scriptMode = ScriptMode.EVALSHA;

		private final CircuitBreaker circuitBreaker = new CircuitBreaker();

		private final DenialCache denialCache = new DenialCache();

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getMaxReconnectDelay() {
			return this.maxReconnectDelay;
		}

		public void setMaxReconnectDelay(Duration maxReconnectDelay) {
			this.maxReconnectDelay = maxReconnectDelay;
		}

		public boolean isBatching() {
			return this.batching;
		}

		public void setBatching(boolean batching) {
			this.batching = batching;
		}

		public ScriptMode getScriptMode() {
			return this.scriptMode;
		}

		public void setScriptMode(ScriptMode scriptMode) {
			this.scriptMode = scriptMode;
		}

		public CircuitBreaker getCircuitBreaker() {
			return this.circuitBreaker;
		}

		public DenialCache getDenialCache() {
			return this.denialCache;
		}

	}

	/**
	 * The local denial cache: an identity Redis denied until a time is denied again until then from this instance's
	 * memory, with the same headers, without a Redis call. Off by default because it is not exact in every case:
	 * quota given back on another instance (a reversal when a later check denies, a late answer undone) is seen
	 * only when the cached denial ends, as are resets and policy changes made without the starter (the
	 * {@code ratelimits} endpoint's resets and overrides, and {@code RateLimitTester}'s resets, reach every
	 * instance's cache).
	 */
	public static class DenialCache {

		/**
		 * Whether denials are cached (Redis backend only). Never admits a request; denies from the cache what Redis
		 * would deny while only requests take quota. Off by default: quota given back on another instance is seen
		 * only when the cached denial ends.
		 */
		private boolean enabled = false;

		/**
		 * Most policy and identity pairs whose denial is kept; beyond it the least useful are evicted.
		 */
		private long maximumSize = 10_000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public long getMaximumSize() {
			return this.maximumSize;
		}

		public void setMaximumSize(long maximumSize) {
			this.maximumSize = maximumSize;
		}

	}

	/**
	 * The circuit breaker (Resilience4j) around Redis: after repeated failures decisions stop waiting on Redis and
	 * follow the failure modes at once, until probes find Redis answering again.
	 */
	public static class CircuitBreaker {

		/**
		 * Whether the circuit breaker is used. Without it every decision tries Redis and waits up to the timeout.
		 */
		private boolean enabled = true;

		/**
		 * Percentage of failed calls (errors and timeouts) among the last calls that opens the circuit.
		 */
		private float failureRateThreshold = 50;

		/**
		 * Number of most recent calls the failure rate is computed over.
		 */
		private int slidingWindowSize = 20;

		/**
		 * Fewest calls in the window before the failure rate is considered.
		 */
		private int minimumNumberOfCalls = 5;

		/**
		 * How long the circuit stays open before probes try Redis again. Also the Retry-After of a 503 from a
		 * policy that fails closed.
		 */
		private Duration waitDurationInOpenState = Duration.ofSeconds(1);

		/**
		 * Probe calls let through while half-open; when enough of them succeed the circuit closes and enforcement
		 * resumes.
		 */
		private int permittedNumberOfCallsInHalfOpenState = 3;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedNumberOfCallsInHalfOpenState() {
			return this.permittedNumberOfCallsInHalfOpenState;
		}

		public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
			this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
		}

	}

	/**
	 * The {@code ratelimit} health contributor (with Spring Boot Actuator).
	 */
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

	/**
	 * The servlet filter and WebFlux filter that apply the rules.
	 */
	public static class Filter {

		/**
		 * Whether the filter is registered.
		 */
		private boolean enabled = true;

		/**
		 * Order of the filter. Spring Security's filter chain runs at -100: the default -90 runs after it, so the
		 * principal is known; set it below -100 to limit before authentication (e.g. per IP against credential
		 * stuffing).
		 */
		private int order = RateLimitEnforcer.DEFAULT_FILTER_ORDER;

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

	/**
	 * One filter rule.
	 */
	public static class Rule {

		/**
		 * Path patterns (Spring PathPattern syntax, e.g. /api/**).
		 */
		private List<String> paths = new ArrayList<>();

		/**
		 * HTTP methods; empty for all.
		 */
		private Set<String> methods = new LinkedHashSet<>();

		/**
		 * Names of the policies that apply.
		 */
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

	/**
	 * How the ip key groups client addresses.
	 */
	public static class Ip {

		/**
		 * Prefix length that groups IPv4 clients: 32 counts each address, 24 a whole /24.
		 */
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

	/**
	 * Which rate-limit headers responses carry.
	 */
	public static class Headers {

		/**
		 * Whether to send X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.
		 */
		private boolean legacy = true;

		/**
		 * Whether to send the IETF RateLimit and RateLimit-Policy headers.
		 */
		private boolean standard = true;

		/**
		 * Whether to send Retry-After on 429 responses.
		 */
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

	/**
	 * The RFC 9457 problem body of 429 responses.
	 */
	public static class Problem {

		/**
		 * The problem type URI of a 429: by default the quota-exceeded type of the IETF rate-limit headers draft
		 * (its title and violated-policies member), about:blank for the plain status, or a type of your own.
		 */
		private String type = ProblemDetailRejectionHandler.QUOTA_EXCEEDED;

		public String getType() {
			return this.type;
		}

		public void setType(String type) {
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

	/**
	 * The in-memory backend, used when the application has no Redis connection.
	 */
	public static class Local {

		/**
		 * Most keys kept in memory; the least used beyond it are forgotten.
		 */
		private long maximumKeys = LocalRateLimitBackend.DEFAULT_MAXIMUM_KEYS;

		public long getMaximumKeys() {
			return this.maximumKeys;
		}

		public void setMaximumKeys(long maximumKeys) {
			this.maximumKeys = maximumKeys;
		}

	}

	/**
	 * Runtime overrides, set through the {@code ratelimits} Actuator endpoint.
	 */
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
