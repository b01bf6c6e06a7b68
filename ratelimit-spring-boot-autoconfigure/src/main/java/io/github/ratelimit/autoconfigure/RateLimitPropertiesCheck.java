package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.InvalidPolicyException;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitPolicy.Limits;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitRule;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.context.properties.bind.BindMethod;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Binds {@code ratelimit.*} as the {@link RateLimitProperties} bean and checks every value once, before any other
 * bean is created: an unknown name ({@link UnknownNamesBindHandler}, described by
 * {@link RateLimitConfigurationFailureAnalyzer}) or an invalid value
 * ({@link InvalidConfigurationPropertyValueException}) stops the start naming the property. Builds the policies and
 * rules the beans use ({@link #registry}, {@link #rules}). Architecture, "Configuration is bound and checked once".
 */
final class RateLimitPropertiesCheck implements BeanFactoryPostProcessor, Ordered {

	private static final String POLICIES = "ratelimit.policies.";

	/** The most counters of a top summary: each recorded denial of a new identity walks them once. */
	private static final int MAX_TOP_CAPACITY = 1024;

	/** The shortest publish interval of the top identities (a write per policy per interval): 100 ms. */
	private static final Duration MIN_PERIOD = Duration.ofMillis(100);

	/** How many times {@code ratelimit.redis.timeout} a lease's {@code lapse-after} must be at least. */
	private static final int LAPSE_PER_TIMEOUT = 3;

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	private @Nullable KeyResolvers keys;

	private List<ConfiguredPolicy> policies = List.of();

	private List<RateLimitRule> rules = List.of();

	private Map<String, LeaseSettings> leases = Map.of();

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		RateLimitProperties properties = Binder.get(beanFactory.getBean(Environment.class))
			.bindOrCreate("ratelimit", Bindable.of(RateLimitProperties.class), new UnknownNamesBindHandler());
		checkValues(properties);
		register(beanFactory, properties);
		KeyResolvers keys = new KeyResolvers(beanFactory,
				new KeySpec.IpPrefixes(properties.ip().ipv4Prefix(), properties.ip().ipv6Prefix()));
		List<ConfiguredPolicy> policies = new ArrayList<>();
		Map<String, LeaseSettings> leases = new LinkedHashMap<>();
		properties.policies().forEach((name, source) -> {
			ConfiguredPolicy policy = policy(name, source, properties.failureMode(), keys);
			policies.add(policy);
			if (source.lease().enabled()) {
				leases.put(name, lease(POLICIES + name + ".lease", source.lease(), policy.policy(),
						properties.redis().timeout()));
			}
		});
		this.leases = Map.copyOf(leases);
		this.beanFactory = beanFactory;
		this.keys = keys;
		this.policies = List.copyOf(policies);
		this.rules = rules(properties.filter().rules(), properties.policies().keySet());
	}

	/** The bean, under Boot's name for it, as a bound value object: Boot binds it no more, {@code configprops} lists it. */
	private static void register(ConfigurableListableBeanFactory beanFactory, RateLimitProperties properties) {
		RootBeanDefinition bean = new RootBeanDefinition(RateLimitProperties.class, () -> properties);
		bean.setAttribute(BindMethod.class.getName(), BindMethod.VALUE_OBJECT);
		BeanDefinitionRegistry registry = (BeanDefinitionRegistry) beanFactory;
		String name = "ratelimit-" + RateLimitProperties.class.getName();
		if (registry.containsBeanDefinition(name)) {
			// an application's own @EnableConfigurationProperties(RateLimitProperties.class): this one replaces it
			registry.removeBeanDefinition(name);
		}
		registry.registerBeanDefinition(name, bean);
	}

	/**
	 * The registry of the configured policies; looks up the beans their keys name, so that one that is no
	 * {@link KeyResolver} stops the start naming the property, not a request.
	 */
	RateLimitPolicyRegistry registry(RateLimitOverrides overrides) {
		for (ConfiguredPolicy policy : this.policies) {
			lookUp(POLICIES + policy.name() + ".key", policy.key());
			KeySpec tier = policy.tier();
			if (tier != null) {
				lookUp(POLICIES + policy.name() + ".tiers.key", tier);
			}
		}
		return new RateLimitPolicyRegistry(this.policies, overrides);
	}

	private void lookUp(String property, KeySpec key) {
		if (key.source().startsWith("bean.")) {
			try {
				Objects.requireNonNull(this.beanFactory).getBean(key.source().substring(5), KeyResolver.class);
			}
			catch (BeansException ex) {
				throw new InvalidConfigurationPropertyValueException(property, key.toString(), ex.getMessage(), ex);
			}
		}
	}

	/** The leased policies' settings by name (empty when none is leased). */
	Map<String, LeaseSettings> leases() {
		return this.leases;
	}

	/** A leased policy's settings: its algorithm must be one whose quota can be leased exactly. */
	private static LeaseSettings lease(String property, PolicyProperties.Lease lease, RateLimitPolicy policy,
			Duration timeout) {
		if (!LeaseSettings.supports(policy.algorithm())) {
			throw invalid(property + ".enabled", true, "applies to token-bucket and fixed-window only (their slices "
					+ "never let instances admit above the limit), not to " + policy.algorithm().id());
		}
		LeaseSettings settings = settings(property, lease);
		// a slice must outlive the calls that take it, else takes fail and open the breaker for every policy
		if (settings.lapseAfter().compareTo(timeout.multipliedBy(LAPSE_PER_TIMEOUT)) < 0) {
			throw invalid(property + ".lapse-after", lease.lapseAfter(), "must be at least " + LAPSE_PER_TIMEOUT
					+ " times ratelimit.redis.timeout (" + timeout + ")");
		}
		return settings;
	}

	private static LeaseSettings settings(String property, PolicyProperties.Lease lease) {
		try {
			return new LeaseSettings(lease.maxSlice(), lease.lapseAfter(), lease.idleAfter());
		}
		catch (IllegalArgumentException ex) {
			// the message starts with the setting's name
			String message = String.valueOf(ex.getMessage());
			String setting = message.substring(0, Math.max(0, message.indexOf(' ')));
			Object value = switch (setting) {
				case "max-slice" -> lease.maxSlice();
				case "lapse-after" -> lease.lapseAfter();
				default -> lease.idleAfter();
			};
			throw invalid(property + "." + setting, value, message);
		}
	}

	/** The filter rules, checked against the configured policies. */
	List<RateLimitRule> rules() {
		return this.rules;
	}

	/** Finds the {@link KeyResolver} beans keys name, and groups addresses for {@code ip} keys as configured. */
	KeySpec.Resolvers keys() {
		return Objects.requireNonNull(this.keys, "ratelimit.* not checked yet");
	}

	private static void checkValues(RateLimitProperties properties) {
		try {
			new RateLimitKeys(properties.keyPrefix());
		}
		catch (IllegalArgumentException ex) {
			throw invalid("ratelimit.key-prefix", properties.keyPrefix(), ex.getMessage());
		}
		between("ratelimit.ip.ipv4-prefix", properties.ip().ipv4Prefix(), 32);
		between("ratelimit.ip.ipv6-prefix", properties.ip().ipv6Prefix(), 128);
		RedisBackendProperties redis = properties.redis();
		positive("ratelimit.redis.timeout", redis.timeout());
		Duration reconnectDelay = redis.maxReconnectDelay();
		if (reconnectDelay == null || reconnectDelay.isNegative()) {
			throw invalid("ratelimit.redis.max-reconnect-delay", reconnectDelay, "must be 0 or positive");
		}
		String breaker = "ratelimit.redis.circuit-breaker.";
		RedisBackendProperties.CircuitBreaker circuitBreaker = redis.circuitBreaker();
		float threshold = circuitBreaker.failureRateThreshold();
		if (!(threshold > 0 && threshold <= 100)) {
			throw invalid(breaker + "failure-rate-threshold", threshold, "must be above 0 and at most 100");
		}
		atLeastOne(breaker + "sliding-window-size", circuitBreaker.slidingWindowSize());
		atLeastOne(breaker + "minimum-number-of-calls", circuitBreaker.minimumNumberOfCalls());
		atLeastOne(breaker + "permitted-number-of-calls-in-half-open-state",
				circuitBreaker.permittedNumberOfCallsInHalfOpenState());
		positive(breaker + "wait-duration-in-open-state", circuitBreaker.waitDurationInOpenState());
		atLeastOne("ratelimit.redis.denial-cache.maximum-size", redis.denialCache().maximumSize());
		// accepted as before down to 1 ms; below it the periodic reconcile would run without pause
		atLeast("ratelimit.overrides.reconcile-interval", properties.overrides().reconcileInterval(),
				Duration.ofMillis(1));
		atLeastOne("ratelimit.local.maximum-keys", properties.local().maximumKeys());
		double nearLimitRatio = properties.metrics().nearLimitRatio();
		if (!(nearLimitRatio >= 0 && nearLimitRatio < 1)) {
			throw invalid("ratelimit.metrics.near-limit-ratio", nearLimitRatio, "must be at least 0 and below 1");
		}
		RateLimitProperties.Top top = properties.top();
		if (top.capacity() < 1 || top.capacity() > MAX_TOP_CAPACITY) {
			throw invalid("ratelimit.top.capacity", top.capacity(), "must be between 1 and " + MAX_TOP_CAPACITY);
		}
		positive("ratelimit.top.window", top.window());
		atLeast("ratelimit.top.publish-interval", top.publishInterval(), MIN_PERIOD);
		ClientPropertiesCheck.check(properties.client());
	}

	private static ConfiguredPolicy policy(String name, PolicyProperties source, FailureMode defaultFailureMode,
			Function<String, KeyResolver> keys) {
		String property = POLICIES + name;
		RateLimitPolicy base = build(property, (field) -> value(field, null, source), () -> {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name)
				.limit(source.limit())
				.cost(source.cost())
				.failureMode(Objects.requireNonNullElse(source.failureMode(), defaultFailureMode))
				.shadow(source.shadow());
			PropertyMapper map = PropertyMapper.get();
			map.from(source.algorithm()).to(builder::algorithm);
			map.from(source.window()).to(builder::window);
			map.from(source.burst()).to(builder::burst);
			map.from(source.minInterval()).to(builder::minInterval);
			return builder.build();
		});
		if (source.maxWait().isNegative()) {
			throw invalid(property + ".max-wait", source.maxWait(), "must not be negative (0 means never wait)");
		}
		KeySpec key = key(property + ".key", source.key(), false, keys);
		Map<String, RateLimitPolicy> overrides = variants(source.overrides(),
				(identity) -> property + ".overrides[" + identity + "]", base, source);
		PolicyProperties.Tiers tiers = source.tiers();
		KeySpec tierKey = (tiers.key() != null) ? key(property + ".tiers.key", tiers.key(), true, keys) : null;
		if (tierKey == null && !tiers.limits().isEmpty()) {
			throw invalid(property + ".tiers.key", null, "required when tiers.limits are configured");
		}
		return new ConfiguredPolicy(base, key, source.missingKey(), overrides, tierKey,
				variants(tiers.limits(), (tier) -> property + ".tiers.limits." + tier, base, source));
	}

	/** The policies that limits by name (overrides, tiers) make of the base, each built under its property. */
	private static Map<String, RateLimitPolicy> variants(Map<String, Limits> limits, Function<String, String> property,
			RateLimitPolicy base, PolicyProperties source) {
		Map<String, RateLimitPolicy> variants = new LinkedHashMap<>();
		limits.forEach((name, own) -> variants.put(name,
				build(property.apply(name), (field) -> value(field, own, source), () -> base.with(own))));
		return variants;
	}

	/** Builds a policy, reporting an invalid field as its property (under {@code property}, with its value). */
	private static RateLimitPolicy build(String property, Function<String, @Nullable Object> values,
			Supplier<RateLimitPolicy> builder) {
		try {
			return builder.get();
		}
		catch (InvalidPolicyException ex) {
			if (ex.field().equals("name")) {
				// the name is the key under ratelimit.policies, not a property of its own
				throw invalid(property, ex.policy(), ex.getMessage());
			}
			throw invalid(property + "." + ex.field(), values.apply(ex.field()), ex.getMessage());
		}
	}

	/** The value of a field as configured: an override's or a tier's own, else the policy's that it inherits. */
	private static @Nullable Object value(String field, @Nullable Limits own, PolicyProperties source) {
		Limits policy = new Limits(source.limit(), source.window(), source.burst(), source.minInterval());
		Limits limits = (own != null) ? own.orElse(policy) : policy;
		return switch (field) {
			case "algorithm" -> source.algorithm();
			case "limit" -> limits.limit();
			case "window" -> limits.window();
			case "burst" -> limits.burst();
			case "min-interval" -> limits.minInterval();
			case "cost" -> source.cost();
			default -> null;
		};
	}

	private static KeySpec key(String property, String spec, boolean tier, Function<String, KeyResolver> keys) {
		try {
			return tier ? KeySpec.parseTier(spec, keys) : KeySpec.parse(spec, keys);
		}
		catch (RuntimeException ex) {
			throw new InvalidConfigurationPropertyValueException(property, spec, ex.getMessage(), ex);
		}
	}

	private static List<RateLimitRule> rules(List<RateLimitProperties.Rule> sources, Set<String> policies) {
		List<RateLimitRule> rules = new ArrayList<>();
		for (int i = 0; i < sources.size(); i++) {
			RateLimitProperties.Rule source = sources.get(i);
			String property = "ratelimit.filter.rules[" + i + "]";
			if (source.paths().isEmpty()) {
				throw invalid(property + ".paths", null, "at least one path pattern is required");
			}
			if (source.policies().isEmpty()) {
				throw invalid(property + ".policies", null, "at least one policy is required");
			}
			for (String name : source.policies()) {
				if (!policies.contains(name)) {
					throw invalid(property + ".policies", String.join(",", source.policies()),
							"unknown policy '" + name + "'; configured policies: " + policies);
				}
			}
			try {
				rules.add(RateLimitRule.of(source.paths(), source.methods(), source.policies()));
			}
			catch (RuntimeException ex) {
				throw new InvalidConfigurationPropertyValueException(property + ".paths",
						String.join(",", source.paths()), ex.getMessage(), ex);
			}
		}
		return List.copyOf(rules);
	}

	private static void positive(String property, @Nullable Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw invalid(property, value, "must be a positive duration");
		}
	}

	/** A period of a repeating task: below a millisecond it would repeat without pause. */
	private static void atLeast(String property, @Nullable Duration value, Duration min) {
		if (value == null || value.compareTo(min) < 0) {
			throw invalid(property, value, "must be at least " + min.toMillis() + "ms");
		}
	}

	private static void between(String property, int value, int max) {
		if (value < 1 || value > max) {
			throw invalid(property, value, "must be between 1 and " + max);
		}
	}

	private static void atLeastOne(String property, long value) {
		if (value < 1) {
			throw invalid(property, value, "must be at least 1");
		}
	}

	private static InvalidConfigurationPropertyValueException invalid(String property, @Nullable Object value,
			@Nullable String reason) {
		return new InvalidConfigurationPropertyValueException(property, value, reason);
	}

}
