package io.github.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
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
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of rate limiting, {@code ratelimit.*}: bound and checked (unknown names, invalid values) once, before
 * any other bean is created, by {@code RateLimitPropertiesCheck}.
 *
 * @param enabled Whether rate limiting is enabled.
 * @param keyPrefix Prefix of every Redis key the limiter writes; no spaces or braces.
 * @param policies Rate-limit policies by name.
 * @param failureMode What a policy does when Redis cannot decide, unless it sets its own: open, closed (503) or local
 * (enforced in this instance's memory).
 * @param redis How the limiter talks to Redis.
 * @param health The ratelimit health contributor (with Spring Boot Actuator).
 * @param local The in-memory backend, used when the application has no Redis connection.
 * @param overrides Runtime overrides, set through the ratelimits Actuator endpoint.
 * @param gateway Spring Cloud Gateway routes (the ratelimit-spring-cloud-gateway module).
 * @param filter The servlet filter and WebFlux filter that apply the rules.
 * @param headers Which rate-limit headers responses carry.
 * @param problem The RFC 9457 problem body of 429 responses.
 * @param ip How the ip key groups client addresses.
 * @param metrics The rate-limit meters (with Micrometer).
 * @param top The most refused identities per policy, read through the ratelimits Actuator endpoint.
 * @param client Outgoing calls to rate-limited partners.
 */
@ConfigurationProperties(prefix = "ratelimit")
public record RateLimitProperties(@DefaultValue("true") boolean enabled,
		@DefaultValue(RateLimitKeys.DEFAULT_PREFIX) String keyPrefix,
		@DefaultValue Map<String, PolicyProperties> policies, @DefaultValue("open") FailureMode failureMode,
		@NestedConfigurationProperty @DefaultValue RedisBackendProperties redis, @DefaultValue Health health,
		@DefaultValue Local local, @DefaultValue Overrides overrides, @DefaultValue Gateway gateway,
		@DefaultValue Filter filter, @DefaultValue Headers headers, @DefaultValue Problem problem,
		@DefaultValue Ip ip, @DefaultValue Metrics metrics, @DefaultValue Top top,
		@NestedConfigurationProperty @DefaultValue ClientProperties client) {

	/**
	 * @param policy a policy name
	 * @return the policy's {@code max-wait}, or null when no such policy is configured
	 */
	public @Nullable Duration maxWait(String policy) {
		PolicyProperties configured = this.policies.get(policy);
		return (configured != null) ? configured.maxWait() : null;
	}

	/**
	 * @param downWhenDegraded Whether the contributor reports DOWN while decisions are degraded (Redis failing, or the
	 * circuit open).
	 */
	public record Health(boolean downWhenDegraded) {
	}

	/**
	 * @param enabled Whether the filter is registered.
	 * @param order Order of the filter; the default -90 runs after Spring Security's chain (-100), below -100 before
	 * authentication.
	 * @param rules Rules: which policies apply to which paths and methods.
	 */
	public record Filter(@DefaultValue("true") boolean enabled,
			@DefaultValue("" + RateLimitFilter.DEFAULT_ORDER) int order, @DefaultValue List<Rule> rules) {
	}

	/**
	 * One filter rule.
	 *
	 * @param paths Path patterns (Spring PathPattern syntax, e.g. /api/**).
	 * @param methods HTTP methods; empty for all.
	 * @param policies Names of the policies that apply.
	 */
	public record Rule(@DefaultValue List<String> paths, @DefaultValue Set<String> methods,
			@DefaultValue List<String> policies) {
	}

	/**
	 * @param ipv4Prefix Prefix length that groups IPv4 clients: 32 counts each address, 24 a whole /24.
	 * @param ipv6Prefix Prefix length that groups IPv6 clients: 64 keeps a client from rotating addresses for fresh
	 * quota.
	 */
	public record Ip(@DefaultValue("32") int ipv4Prefix, @DefaultValue("64") int ipv6Prefix) {
	}

	/**
	 * @param legacy Whether to send X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.
	 * @param standard Whether to send the IETF RateLimit and RateLimit-Policy headers.
	 * @param retryAfter Whether to send Retry-After on 429 responses.
	 * @param partitionKeySecret Secret of the keyed hash (HmacSHA256) sent as the partition key pk of the IETF
	 * headers; no pk when unset, the same on every instance.
	 */
	public record Headers(@DefaultValue("true") boolean legacy, @DefaultValue("true") boolean standard,
			@DefaultValue("true") boolean retryAfter, @Nullable String partitionKeySecret) {
	}

	/**
	 * @param type The problem type URI of a 429: the IETF draft's quota-exceeded type, about:blank, or your own.
	 */
	public record Problem(@DefaultValue(ProblemDetailRejectionHandler.QUOTA_EXCEEDED) URI type) {
	}

	/**
	 * @param defaultPolicies Policies checked for the routes whose RequestRateLimiter filter names none.
	 */
	public record Gateway(@DefaultValue List<String> defaultPolicies) {
	}

	/**
	 * @param maximumKeys Most keys kept in memory; the least used beyond it are forgotten.
	 */
	public record Local(@DefaultValue("" + LocalRateLimitBackend.DEFAULT_MAXIMUM_KEYS) long maximumKeys) {
	}

	/**
	 * @param nearLimitRatio Share of a policy's quota below which an admitted decision's remaining quota counts it in
	 * ratelimit.near.limit: 0.2 counts admissions that leave less than a fifth; 0 turns the counter off. At least 0,
	 * below 1.
	 */
	public record Metrics(
			@DefaultValue("" + RateLimitDecisionMeterHandler.DEFAULT_NEAR_LIMIT_RATIO) double nearLimitRatio) {
	}

	/**
	 * @param reconcileInterval How often every instance reads the runtime overrides from Redis again: the longest an
	 * instance that missed a change notification takes to apply it (at least 1ms).
	 */
	public record Overrides(@DefaultValue("1s") Duration reconcileInterval) {
	}

	/**
	 * @param enabled Whether each instance counts its most refused identities per policy (and, with Redis, shares
	 * them with the other instances).
	 * @param capacity Most identities counted per policy and half window; the memory kept per policy is bounded by
	 * twice this many counters, whatever the number of clients.
	 * @param window How far back denials count: the summary covers between the last half of it and all of it.
	 * @param digestOnly Whether the endpoint shows a digest of every identity, also of ip and principal keys (shown as
	 * they are by default), for identities that are personal data.
	 * @param publishInterval How often each instance publishes its summaries to Redis (at least 100ms); a summary not
	 * published again within three intervals (a gone instance's) no longer counts.
	 */
	public record Top(@DefaultValue("true") boolean enabled, @DefaultValue("64") int capacity,
			@DefaultValue("1m") Duration window, @DefaultValue("false") boolean digestOnly,
			@DefaultValue("2s") Duration publishInterval) {
	}

}
