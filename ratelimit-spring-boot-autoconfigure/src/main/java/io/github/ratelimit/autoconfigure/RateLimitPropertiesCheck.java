package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.function.Function;

import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Checks the {@code ratelimit.*} configuration once the application context has read its bean definitions, before
 * any bean is created and before an embedded web server starts: names under {@code ratelimit.} that no property has
 * (a typo such as {@code ratelimit.enbled} or {@code ratelimit.policy.api.limit}), values that do not convert, and
 * values that the policies, the filter rules and the Redis settings reject. A mistake stops the start with Spring
 * Boot's failure report naming the property (unknown names are described by
 * {@link RateLimitConfigurationFailureAnalyzer}, with the closest known name), not with an exception from inside the
 * web server's start.
 *
 * <p>Names are judged as Spring Boot binds them ({@link UnknownNamesBindHandler}): the elements of a list that a
 * source of higher precedence replaces are not unknown, unless misspelt. As with
 * {@code @ConfigurationProperties(ignoreUnknownFields = false)}, names that come from environment variables or system
 * properties are not checked: those sources hold names for other programs too.
 */
final class RateLimitPropertiesCheck implements BeanFactoryPostProcessor, EnvironmentAware, Ordered {

	private @Nullable Environment environment;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		if (this.environment == null) {
			return;
		}
		check(bind(this.environment), (name) -> {
			if (!beanFactory.containsBean(name)) {
				throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
			}
			// the bean itself is created later, with the policies; here only its existence is checked
			return (request) -> null;
		});
	}

	/**
	 * Binds {@code ratelimit.*}, failing on names that no property has.
	 * @param environment the environment
	 * @return the properties
	 * @throws org.springframework.boot.context.properties.bind.BindException when a name is unknown or a value does
	 * not convert
	 */
	static RateLimitProperties bind(Environment environment) {
		return Binder.get(environment)
			.bindOrCreate("ratelimit", Bindable.of(RateLimitProperties.class), new UnknownNamesBindHandler());
	}

	/**
	 * Checks every value the starter validates, as the beans that use them will.
	 * @param properties the properties
	 * @param keyResolvers finds the {@link KeyResolver} beans named as {@code @name} in keys
	 * @throws InvalidConfigurationPropertyValueException naming the property at fault
	 */
	static void check(RateLimitProperties properties, Function<String, KeyResolver> keyResolvers) {
		keyPrefix(properties.getKeyPrefix());
		RateLimitPolicyRegistry policies = PolicyProperties.registry(properties, keyResolvers,
				RateLimitOverrides.inMemory());
		RateLimitWebConfiguration.rules(properties, policies);
		RateLimitProperties.Redis redis = properties.getRedis();
		RateLimitAutoConfiguration.positive("ratelimit.redis.timeout", redis.getTimeout());
		RateLimitAutoConfiguration.circuitBreakerConfig(redis.getCircuitBreaker());
		maxReconnectDelay(redis.getMaxReconnectDelay());
		RateLimitAutoConfiguration.denialCacheSize(redis.getDenialCache());
		RateLimitAutoConfiguration.positive("ratelimit.overrides.reconcile-interval",
				properties.getOverrides().getReconcileInterval());
		if (properties.getLocal().getMaximumKeys() < 1) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.local.maximum-keys",
					properties.getLocal().getMaximumKeys(), "must be at least 1");
		}
	}

	/**
	 * Checks the Redis key prefix.
	 * @param prefix the configured prefix
	 * @return the prefix
	 * @throws InvalidConfigurationPropertyValueException when the prefix is not usable in keys
	 */
	static String keyPrefix(String prefix) {
		try {
			new RateLimitKeys(prefix);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.key-prefix", prefix, ex.getMessage());
		}
		return prefix;
	}

	/**
	 * Checks the longest reconnect delay of the Lettuce client.
	 * @param delay the configured delay
	 * @return the delay
	 * @throws InvalidConfigurationPropertyValueException when the delay is negative
	 */
	static Duration maxReconnectDelay(@Nullable Duration delay) {
		if (delay == null || delay.isNegative()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.redis.max-reconnect-delay", delay,
					"must be 0 or positive");
		}
		return delay;
	}

}
