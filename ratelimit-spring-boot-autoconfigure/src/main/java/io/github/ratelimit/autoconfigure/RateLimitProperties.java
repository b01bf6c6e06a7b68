package io.github.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.MissingKey;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Configuration of rate limiting, under the prefix {@code ratelimit}. A name under {@code ratelimit.} that no
 * property here has is a mistake and stops the start: {@code RateLimitPropertiesCheck} finds it, before these
 * properties are bound. Not {@code ignoreUnknownFields = false}: Spring Boot's check behind it refuses valid lists
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
	private Map<String, Policy> policies = new LinkedHashMap<>();

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

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	/**
	 * The {@code max-wait} of a configured policy.
	 * @param policy the policy name
	 * @return its longest wait, or null when no such policy is configured
	 */
	public @Nullable Duration maxWait(String policy) {
		Policy configured = this.policies.get(policy);
		return (configured != null) ? configured.getMaxWait() : null;
	}

	public void setPolicies(Map<String, Policy> policies) {
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
	 * Which rate-limit headers responses carry.
	 */
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

		KeySpec.IpPrefixes prefixes() {
			if (this.ipv4Prefix < 1 || this.ipv4Prefix > 32) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.ip.ipv4-prefix", this.ipv4Prefix,
						"must be between 1 and 32");
			}
			if (this.ipv6Prefix < 1 || this.ipv6Prefix > 128) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.ip.ipv6-prefix", this.ipv6Prefix,
						"must be between 1 and 128");
			}
			return new KeySpec.IpPrefixes(this.ipv4Prefix, this.ipv6Prefix);
		}

	}

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
		private URI type = URI.create(ProblemDetailRejectionHandler.QUOTA_EXCEEDED);

		public URI getType() {
			return this.type;
		}

		public void setType(URI type) {
			this.type = type;
		}

	}

	/**
	 * One policy.
	 */
	public static class Policy {

		/**
		 * Algorithm: token-bucket, gcra, sliding-window-log, sliding-window-counter, fixed-window or concurrency.
		 */
		private @Nullable Algorithm algorithm;

		/**
		 * Requests admitted per window; for concurrency, requests in flight.
		 */
		private long limit;

		/**
		 * Window length; for concurrency, the longest a permit is held before it is reclaimed.
		 */
		private @Nullable Duration window;

		/**
		 * Bucket capacity for token-bucket and gcra. Defaults to the limit.
		 */
		private @Nullable Long burst;

		/**
		 * Minimum time between two admitted requests of one key (sliding-window-log only).
		 */
		private @Nullable Duration minInterval;

		/**
		 * Quota one request takes.
		 */
		private long cost = 1;

		/**
		 * Whom the policy counts: ip, header:<Name>, principal, global, @<KeyResolver bean name>, or a SpEL
		 * expression over #request and #principal.
		 */
		private String key = "ip";

		/**
		 * What happens to a request whose key cannot be resolved: shared (all such requests count as one
		 * 'anonymous' identity), skip (the policy does not apply) or deny (rejected with 429).
		 */
		private MissingKey missingKey = MissingKey.SHARED;

		/**
		 * What this policy does when Redis cannot decide: open, closed or local. Defaults to
		 * ratelimit.failure-mode.
		 */
		private @Nullable FailureMode failureMode;

		/**
		 * Shadow mode: the policy is checked and counted as usual but never denies; a request it would have denied
		 * is admitted and counted under the outcome shadow_denied. For rolling out a new limit safely.
		 */
		private boolean shadow;

		/**
		 * How long a call of a @RateLimited bean method (not a controller's) may wait for its turn when this policy
		 * denies it, retrying after each retry-after, before it throws RateLimitExceededException. Zero: never wait.
		 * The annotation's maxWait takes precedence.
		 */
		private Duration maxWait = Duration.ZERO;

		/**
		 * Limits replacing the policy's own for specific keys (e.g. one enterprise customer's API key). Use the
		 * bracket notation for keys with special characters: overrides."[key-123]".limit=1000.
		 */
		private Map<String, Limits> overrides = new LinkedHashMap<>();

		private final Tiers tiers = new Tiers();

		public @Nullable Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public long getLimit() {
			return this.limit;
		}

		public void setLimit(long limit) {
			this.limit = limit;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

		public @Nullable Duration getMinInterval() {
			return this.minInterval;
		}

		public void setMinInterval(@Nullable Duration minInterval) {
			this.minInterval = minInterval;
		}

		public long getCost() {
			return this.cost;
		}

		public void setCost(long cost) {
			this.cost = cost;
		}

		public String getKey() {
			return this.key;
		}

		public void setKey(String key) {
			this.key = key;
		}

		public @Nullable FailureMode getFailureMode() {
			return this.failureMode;
		}

		public void setFailureMode(@Nullable FailureMode failureMode) {
			this.failureMode = failureMode;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public MissingKey getMissingKey() {
			return this.missingKey;
		}

		public void setMissingKey(MissingKey missingKey) {
			this.missingKey = missingKey;
		}

		public Map<String, Limits> getOverrides() {
			return this.overrides;
		}

		public void setOverrides(Map<String, Limits> overrides) {
			this.overrides = overrides;
		}

		public Tiers getTiers() {
			return this.tiers;
		}

	}

	/**
	 * Limits replacing some of a policy's own; unset values are inherited from the policy.
	 */
	public static class Limits {

		/**
		 * Requests admitted per window.
		 */
		private @Nullable Long limit;

		/**
		 * Window length.
		 */
		private @Nullable Duration window;

		/**
		 * Bucket capacity (token-bucket and gcra).
		 */
		private @Nullable Long burst;

		/**
		 * Minimum time between two requests (sliding-window-log).
		 */
		private @Nullable Duration minInterval;

		public @Nullable Long getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Long limit) {
			this.limit = limit;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

		public @Nullable Duration getMinInterval() {
			return this.minInterval;
		}

		public void setMinInterval(@Nullable Duration minInterval) {
			this.minInterval = minInterval;
		}

	}

	/**
	 * Tiers: limits by a tier name resolved from the principal or the server (never from a header the client
	 * sets).
	 */
	public static class Tiers {

		/**
		 * How the tier name is resolved: @<KeyResolver bean name> or a SpEL expression, typically over #principal
		 * (e.g. a claim or an authority). Requests without a tier, or with an unknown one, get the policy's own
		 * limits.
		 */
		private @Nullable String key;

		/**
		 * Limits per tier name.
		 */
		private Map<String, Limits> limits = new LinkedHashMap<>();

		public @Nullable String getKey() {
			return this.key;
		}

		public void setKey(@Nullable String key) {
			this.key = key;
		}

		public Map<String, Limits> getLimits() {
			return this.limits;
		}

		public void setLimits(Map<String, Limits> limits) {
			this.limits = limits;
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
