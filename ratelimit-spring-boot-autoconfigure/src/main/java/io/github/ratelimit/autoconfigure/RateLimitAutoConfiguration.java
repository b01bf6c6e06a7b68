package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitObservationConvention;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Wires the rate-limit engine: the Redis backend on the application's own Redis connection when there is one, the
 * local backend otherwise (with a warning that limits are then per instance). Over Redis the limiter is guarded: a
 * time budget per decision ({@code ratelimit.redis.timeout}), a Resilience4j circuit breaker
 * ({@code ratelimit.redis.circuit-breaker.*}) and each policy's failure mode, with an in-memory fallback for
 * {@code failure-mode: local}. Each decision is observed in the application's {@link ObservationRegistry} when it
 * has one (see {@link RateLimitMetricsAutoConfiguration} for the meters). With
 * {@code ratelimit.redis.denial-cache.enabled} the Redis limiter answers repeated denials from a
 * {@link RateLimitDenialCache}, which every runtime override change and announced reset makes forget what they
 * affect.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RedisBackendConfiguration.class, LocalBackendConfiguration.class, RateLimitWebConfiguration.class,
		RateLimitHealthConfiguration.class })
public final class RateLimitAutoConfiguration {

	/** Name of the circuit breaker around Redis, as it appears in logs, health and metrics. */
	public static final String CIRCUIT_BREAKER_NAME = "ratelimit-redis";

	/**
	 * Checks {@code ratelimit.*} before any bean is created: unknown names and invalid values stop the start with
	 * Spring Boot's failure report, before an embedded web server starts.
	 * @return the check
	 */
	@Bean
	@ConditionalOnMissingBean(search = SearchStrategy.CURRENT)
	static RateLimitPropertiesCheck rateLimitPropertiesCheck() {
		return new RateLimitPropertiesCheck();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitPolicyRegistry rateLimitPolicies(RateLimitProperties properties, BeanFactory beanFactory,
			RateLimitOverrides overrides) {
		return PolicyProperties.registry(properties, KeyResolvers.beans(beanFactory, properties), overrides);
	}

	/**
	 * Runtime overrides kept in this instance's memory, when there is no Redis to share them
	 * ({@link RedisBackendConfiguration} declares the shared ones).
	 * @return the overrides
	 */
	@Bean
	@ConditionalOnMissingBean
	RateLimitOverrides rateLimitOverrides() {
		return RateLimitOverrides.inMemory();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitBackend backend, RateLimitProperties properties,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<RateLimitObservationConvention> observationConvention,
			ObjectProvider<RateLimitOverrides> overrides) {
		ObservationRegistry observations = observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP);
		RateLimitObservationConvention convention = observationConvention.getIfUnique();
		if (backend instanceof LocalRateLimitBackend) {
			return new DefaultRateLimiter(backend, observations, convention);
		}
		RateLimitProperties.Redis redis = properties.getRedis();
		DefaultRateLimiter.Builder builder = DefaultRateLimiter.builder(backend)
			.observationRegistry(observations)
			.timeout(positive("ratelimit.redis.timeout", redis.getTimeout()))
			.fallback(new LocalRateLimitBackend(properties.getLocal().getMaximumKeys(),
					LocalRateLimitBackend.systemClock()));
		RateLimitProperties.CircuitBreaker breaker = redis.getCircuitBreaker();
		if (breaker.isEnabled()) {
			builder.circuitBreaker(CircuitBreaker.of(CIRCUIT_BREAKER_NAME, circuitBreakerConfig(breaker)));
			builder.closedRetryAfter(breaker.getWaitDurationInOpenState());
		}
		if (convention != null) {
			builder.observationConvention(convention);
		}
		RateLimitProperties.DenialCache denials = redis.getDenialCache();
		if (denials.isEnabled() && backend instanceof RedisRateLimitBackend) {
			RateLimitDenialCache cache = RateLimitDenialCache.create(denialCacheSize(denials));
			builder.denialCache(cache);
			// overrides changed and resets announced, here or on another instance, are forgotten at once
			overrides.ifAvailable((changes) -> changes.addListener(RateLimitOverrides.Listener.invalidating(cache)));
		}
		return builder.build();
	}

	/**
	 * Checks the bound of the denial cache.
	 * @param denials the {@code ratelimit.redis.denial-cache.*} properties
	 * @return the maximum size
	 * @throws InvalidConfigurationPropertyValueException naming the property when it is not positive
	 */
	static long denialCacheSize(RateLimitProperties.DenialCache denials) {
		if (denials.getMaximumSize() < 1) {
			throw invalid("ratelimit.redis.denial-cache.maximum-size", "must be at least 1", denials.getMaximumSize());
		}
		return denials.getMaximumSize();
	}

	/**
	 * The configuration of the circuit breaker around Redis, as the starter builds it from its properties.
	 * @param breaker the {@code ratelimit.redis.circuit-breaker.*} properties
	 * @return the Resilience4j configuration
	 * @throws InvalidConfigurationPropertyValueException naming the property when a value is invalid
	 */
	public static CircuitBreakerConfig circuitBreakerConfig(RateLimitProperties.CircuitBreaker breaker) {
		String prefix = "ratelimit.redis.circuit-breaker.";
		if (!(breaker.getFailureRateThreshold() > 0 && breaker.getFailureRateThreshold() <= 100)) {
			throw invalid(prefix + "failure-rate-threshold", "must be above 0 and at most 100",
					breaker.getFailureRateThreshold());
		}
		if (breaker.getSlidingWindowSize() < 1) {
			throw invalid(prefix + "sliding-window-size", "must be at least 1", breaker.getSlidingWindowSize());
		}
		if (breaker.getMinimumNumberOfCalls() < 1) {
			throw invalid(prefix + "minimum-number-of-calls", "must be at least 1", breaker.getMinimumNumberOfCalls());
		}
		if (breaker.getPermittedNumberOfCallsInHalfOpenState() < 1) {
			throw invalid(prefix + "permitted-number-of-calls-in-half-open-state", "must be at least 1",
					breaker.getPermittedNumberOfCallsInHalfOpenState());
		}
		Duration wait = positive(prefix + "wait-duration-in-open-state", breaker.getWaitDurationInOpenState());
		return CircuitBreakerConfig.custom()
			.failureRateThreshold(breaker.getFailureRateThreshold())
			// separate setters: slidingWindow(size, calls, type) is 2.4-only, and Spring Cloud manages Resilience4j 2.3
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(breaker.getSlidingWindowSize())
			.minimumNumberOfCalls(Math.min(breaker.getMinimumNumberOfCalls(), breaker.getSlidingWindowSize()))
			.waitDurationInOpenState(wait)
			.permittedNumberOfCallsInHalfOpenState(breaker.getPermittedNumberOfCallsInHalfOpenState())
			.build();
	}

	static Duration positive(String property, @Nullable Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw invalid(property, "must be a positive duration", value);
		}
		return value;
	}

	private static InvalidConfigurationPropertyValueException invalid(String property, String problem,
			@Nullable Object value) {
		return new InvalidConfigurationPropertyValueException(property, value, problem);
	}

}
