package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitObservationConvention;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.ProblemDetailRejectionHandler;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitHeaders;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitRejectionHandler;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.TopDenials;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.util.StringUtils;

/**
 * Wires the engine: the Redis backend ({@link RedisBackendConfiguration}, imported first), else the local backend;
 * over Redis a guarded limiter (time budget, circuit breaker, failure modes, local fallback, optional denial cache).
 * Also what the servlet, reactive and non-web integrations share (enforcer, responses, rejection handler) and the
 * {@code ratelimit} health contributor.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Import(RedisBackendConfiguration.class)
public final class RateLimitAutoConfiguration {

	private static final Log logger = LogFactory.getLog(RateLimitAutoConfiguration.class);

	/** Name of the circuit breaker around Redis, as it appears in logs, health and metrics. */
	public static final String CIRCUIT_BREAKER_NAME = "ratelimit-redis";

	/** Binds and checks {@code ratelimit.*} before any other bean is created. */
	@Bean
	@ConditionalOnMissingBean(search = SearchStrategy.CURRENT)
	static RateLimitPropertiesCheck rateLimitPropertiesCheck() {
		return new RateLimitPropertiesCheck();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitPolicyRegistry rateLimitPolicies(RateLimitPropertiesCheck checked, RateLimitOverrides overrides) {
		return checked.registry(overrides);
	}

	/** Runtime overrides in this instance's memory, without Redis ({@link RedisBackendConfiguration} shares them). */
	@Bean
	@ConditionalOnMissingBean
	RateLimitOverrides rateLimitOverrides() {
		return RateLimitOverrides.inMemory();
	}

	/** The in-memory backend when there is no Redis connection (the imported configuration's beans come first). */
	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(RateLimitProperties properties) {
		LeasesInUse.refuseWithoutRedis(properties);
		logger.warn("No Redis connection: rate limits are kept in this instance's memory and are NOT shared with "
				+ "other instances. Add spring-boot-starter-data-redis and configure spring.data.redis.* to share them.");
		return new LocalRateLimitBackend(properties.local().maximumKeys(), LocalRateLimitBackend.systemClock());
	}

	/** Warns when a lease is configured that the limiter in use does not apply. */
	@Bean
	@ConditionalOnMissingBean
	LeasesInUse rateLimitLeasesInUse(RateLimitProperties properties, ObjectProvider<RateLimiter> limiter) {
		return new LeasesInUse(properties, limiter);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitBackend backend, RateLimitProperties properties,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<RateLimitObservationConvention> observationConvention,
			ObjectProvider<RateLimitOverrides> overrides,
			@Qualifier("rateLimitLeasingBackend") ObjectProvider<LeasingBackend> leasing) {
		ObservationRegistry observations = observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP);
		RateLimitObservationConvention convention = observationConvention.getIfUnique();
		if (backend instanceof LocalRateLimitBackend) {
			return new DefaultRateLimiter(backend, observations, convention);
		}
		RedisBackendProperties redis = properties.redis();
		LocalRateLimitBackend fallback = new LocalRateLimitBackend(properties.local().maximumKeys(),
				LocalRateLimitBackend.systemClock());
		// leased policies decide from their slices below the guard: a take that fails follows the failure mode
		LeasingBackend leased = leasing.getIfAvailable();
		DefaultRateLimiter.Builder builder = DefaultRateLimiter.builder((leased != null) ? leased : backend)
			.observationRegistry(observations)
			.timeout(redis.timeout())
			.fallback(fallback);
		// a reset announced here or on another instance starts the fallback's counts afresh too
		overrides.ifAvailable((changes) -> changes.addListener(RateLimitOverrides.Listener.resetting(fallback)));
		RedisBackendProperties.CircuitBreaker breaker = redis.circuitBreaker();
		if (breaker.enabled()) {
			builder.circuitBreaker(CircuitBreaker.of(CIRCUIT_BREAKER_NAME, circuitBreakerConfig(breaker)));
			builder.closedRetryAfter(breaker.waitDurationInOpenState());
		}
		if (convention != null) {
			builder.observationConvention(convention);
		}
		RedisBackendProperties.DenialCache denials = redis.denialCache();
		if (denials.enabled() && backend instanceof RedisRateLimitBackend) {
			RateLimitDenialCache cache = RateLimitDenialCache.create(denials.maximumSize());
			builder.denialCache(cache);
			// overrides changed and resets announced, here or on another instance, are forgotten at once
			overrides.ifAvailable((changes) -> changes.addListener(RateLimitOverrides.Listener.invalidating(cache)));
		}
		return builder.build();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitRejectionHandler rateLimitRejectionHandler(RateLimitProperties properties,
			ObjectProvider<JsonMapper> jsonMapper) {
		return new ProblemDetailRejectionHandler(properties.problem().type(),
				jsonMapper.getIfAvailable(JsonMapper::shared));
	}

	/** Declared in non-web applications too, where {@code @RateLimited} bean methods use it. */
	@Bean
	@ConditionalOnMissingBean
	RateLimitEnforcer rateLimitEnforcer(RateLimiter limiter, RateLimitPolicyRegistry policies,
			RateLimitProperties properties, RateLimitPropertiesCheck checked, ObjectProvider<TopDenials> top) {
		TopDenials denials = top.getIfAvailable();
		return new RateLimitEnforcer(limiter, policies, checked.rules(), checked.keys(), properties.failureMode(),
				(denials != null) ? denials::record : null);
	}

	/** This instance's most refused identities per policy; resets heard of, here or elsewhere, remove theirs. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.top.enabled", matchIfMissing = true)
	TopDenials rateLimitTopDenials(RateLimitProperties properties, ObjectProvider<RateLimitOverrides> overrides) {
		TopDenials top = new TopDenials(properties.top().capacity(), properties.top().window());
		overrides.ifAvailable((changes) -> changes.addListener(top));
		return top;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitResponses rateLimitResponses(RateLimitProperties properties,
			RateLimitRejectionHandler rejectionHandler) {
		RateLimitProperties.Headers headers = properties.headers();
		return new RateLimitResponses(
				new RateLimitHeaders(headers.legacy(), headers.standard(), headers.retryAfter(),
						StringUtils.hasLength(headers.partitionKeySecret()) ? headers.partitionKeySecret() : null),
				rejectionHandler, System::currentTimeMillis);
	}

	/**
	 * @param breaker the {@code ratelimit.redis.circuit-breaker.*} properties
	 * @return the Resilience4j configuration
	 */
	public static CircuitBreakerConfig circuitBreakerConfig(RedisBackendProperties.CircuitBreaker breaker) {
		return CircuitBreakerConfig.custom()
			.failureRateThreshold(breaker.failureRateThreshold())
			// separate setters: slidingWindow(size, calls, type) is 2.4-only, and Spring Cloud manages Resilience4j 2.3
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(breaker.slidingWindowSize())
			.minimumNumberOfCalls(Math.min(breaker.minimumNumberOfCalls(), breaker.slidingWindowSize()))
			.waitDurationInOpenState(breaker.waitDurationInOpenState())
			.permittedNumberOfCallsInHalfOpenState(breaker.permittedNumberOfCallsInHalfOpenState())
			.build();
	}

	/** The {@code ratelimit} health contributor, with Spring Boot's health support on the class path. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	@ConditionalOnEnabledHealthIndicator("ratelimit")
	static class HealthConfiguration {

		// bean name "ratelimitHealthIndicator": the contributor is "ratelimit" in /actuator/health
		@Bean
		@ConditionalOnMissingBean(name = "ratelimitHealthIndicator")
		RateLimitHealthIndicator ratelimitHealthIndicator(RateLimiter limiter, RateLimitProperties properties) {
			return new RateLimitHealthIndicator(limiter, properties.health().downWhenDegraded());
		}

	}

}
