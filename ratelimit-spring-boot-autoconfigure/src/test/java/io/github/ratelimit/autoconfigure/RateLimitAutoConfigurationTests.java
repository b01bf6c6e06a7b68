package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpointAutoConfiguration;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpointWebExtension;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RedisOverrideStore;
import io.github.ratelimit.spring.RequestContext;
import io.github.ratelimit.spring.RuntimeOverride;
import io.github.ratelimit.testkit.FixedWindows;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint.ConfigurationPropertiesBeanDescriptor;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

class RateLimitAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void usesTheApplicationsRedisConnectionAndSharesCountsThroughIt() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		this.runner
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=2",
					"ratelimit.policies.api.window=1m", "ratelimit.top.enabled=false")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimiter.class);
				assertThat(context.getBean(RateLimitBackend.class)).isInstanceOf(RedisRateLimitBackend.class);
				RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
				assertThat(policies.get("api").algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
				assertThat(policies.get("api").window()).isEqualTo(Duration.ofMinutes(1));
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitRequest request = RateLimitRequest.of(policies.get("api"), "client");
				// the three checks and the key read must fall in one fixed window (each whole minute ends one)
				FixedWindows.awayFromWindowEnd(Duration.ofMinutes(1), Duration.ofSeconds(5));
				assertThat(limiter.check(request).allowed()).isTrue();
				assertThat(limiter.check(request).allowed()).isTrue();
				assertThat(limiter.check(request).allowed()).isFalse();
				assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{client}:api:fw");
			});
	}

	@Test
	void anApplicationStoppedAndStartedAgainDecidesItsNextRequestsOnRedisOnBothPaths() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		this.runner
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=100",
					"ratelimit.policies.api.window=1h",
					// what is tested is the restart: a cold first call on a loaded machine may outlast 50 ms
					"ratelimit.redis.timeout=10s")
			.run((context) -> {
				RedisRateLimitBackend backend = context.getBean(RedisRateLimitBackend.class);
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
				RateLimitRequest request = RateLimitRequest.of(policies.get("api"), "restarted");
				assertThat(backend.isRunning()).isTrue();
				// the count, across the restart, must go on in one fixed window (each whole hour ends one)
				FixedWindows.awayFromWindowEnd(Duration.ofHours(1), Duration.ofSeconds(30));
				assertThat(limiter.checkAsync(request).block(Duration.ofSeconds(10)).decisions().get(0).remaining()).isEqualTo(99);
				// a context stopped and started (or paused and resumed, or checkpointed and restored)
				context.getSourceApplicationContext().stop();
				assertThat(backend.isRunning()).isFalse();
				context.getSourceApplicationContext().start();
				assertThat(backend.isRunning()).isTrue();
				// counted in Redis, not by a failure mode: the count goes on from where it was
				assertThat(limiter.checkAsync(request).block(Duration.ofSeconds(10)).decisions().get(0).remaining()).isEqualTo(98);
				assertThat(limiter.check(request).decisions().get(0).remaining()).isEqualTo(97);
				assertThat(redis.commands().hget("rl:{restarted}:api:fw", "c")).isEqualTo("3");
			});
	}

	@Test
	void runtimeOverridesAreSharedThroughRedisAndTheEndpointIsThereWhenExposed() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitsEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=100",
					"ratelimit.policies.api.window=1h", "management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisOverrideStore.class)
					.hasSingleBean(RateLimitsEndpoint.class)
					.hasSingleBean(RateLimitsEndpointWebExtension.class);
				RateLimitPolicyRegistry registry = context.getBean(RateLimitPolicyRegistry.class);
				assertThat(registry.overrides()).isSameAs(context.getBean(RateLimitOverrides.class));
				registry.overrides().set("api", null, new RuntimeOverride(7L, null, null, null));
				assertThat(redis.commands().hget("rl:overrides", "api")).isEqualTo("{\"limit\":7}");
				assertThat(registry.overrides().apply(registry.get("api"), "anyone").limit()).isEqualTo(7);
			});
	}

	@Test
	void withoutRedisRuntimeOverridesStayInMemoryAndTheEndpointIsOffUnlessExposed() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.withConfiguration(AutoConfigurations.of(RateLimitsEndpointAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverrides.class)
				.doesNotHaveBean(RedisOverrideStore.class)
				.doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void fallsBackToTheLocalBackendWithoutRedis() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context.getBean(RateLimitBackend.class))
				.isInstanceOf(LocalRateLimitBackend.class));
	}

	@Test
	void backsOffWhenTheUserDefinesBeans() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context.getBean(RateLimitBackend.class)).isSameAs(context.getBean(UserBeans.class).backend);
			assertThat(context).hasSingleBean(RateLimiter.class);
		});
	}

	@Test
	void isOffWhenDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimiter.class)
				.doesNotHaveBean(RateLimitBackend.class));
	}

	@Test
	void invalidPoliciesFailAtStartupNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=0",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("limit must be between 1"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=0",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.bad.limit",
					"limit must be between 1"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=leaky-bucket", "ratelimit.policies.bad.limit=5",
				"ratelimit.policies.bad.window=1s")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'ratelimit.policies.bad.algorithm'")
				.hasStackTraceContaining("leaky-bucket"));
		this.runner.withPropertyValues("ratelimit.policies.bad.algorithm=gcra", "ratelimit.policies.bad.limit=5")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.bad.window",
					"window is required"));
	}

	@Test
	void algorithmsAreBoundByTheirIdsOrTheirEnumNames() {
		Map<String, Algorithm> expected = new LinkedHashMap<>();
		List<String> properties = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			for (String value : List.of(algorithm.id(), algorithm.name(), algorithm.name().toLowerCase(Locale.ROOT))) {
				String name = "p" + expected.size();
				expected.put(name, algorithm);
				properties.addAll(List.of("ratelimit.policies." + name + ".algorithm=" + value,
						"ratelimit.policies." + name + ".limit=1", "ratelimit.policies." + name + ".window=1m"));
			}
		}
		this.runner.withPropertyValues(properties.toArray(String[]::new)).run((context) -> {
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			expected.forEach((name, algorithm) -> assertThat(policies.get(name).algorithm()).isEqualTo(algorithm));
		});
	}

	@Test
	void overridesAndTiersAreValidatedNamingTheirProperties() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.key=header:X-Api-Key",
					"ratelimit.policies.api.overrides[big-customer].limit=1000",
					"ratelimit.policies.api.tiers.key=#principal?.name",
					"ratelimit.policies.api.tiers.limits.pro.limit=100",
					"ratelimit.policies.api.tiers.limits.pro.burst=150")
			.run((context) -> {
				RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
				assertThat(policies.configured("api").overrides().get("big-customer").limit()).isEqualTo(1000);
				assertThat(policies.configured("api").overrides().get("big-customer").burst())
					.as("an override of the limit carries the burst along when the burst was the limit")
					.isEqualTo(1000);
				assertThat(policies.configured("api").tiers().get("pro").burst()).isEqualTo(150);
			});
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.overrides[k1].limit=-1")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.policies.api.overrides[k1].limit", "limit must be between 1"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.tiers.key=header:X-Tier")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.tiers.key",
					"never from a value the client sets"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.tiers.key=#request.header('X-Tier')")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.tiers.key",
					"reads the request"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.ip.ipv6-prefix=129")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.ip.ipv6-prefix",
					"between 1 and 128"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.tiers.limits.pro.limit=5")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.tiers.key",
					"required when tiers.limits are configured"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.key=#request.header(")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.key"));
		this.runner
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
					"ratelimit.policies.api.window=1m", "ratelimit.policies.api.key=@nothing")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.key",
					"no KeyResolver bean named 'nothing'"));
	}

	@Test
	void keyResolverBeansNamedByConfiguredKeysAreTheApplicationsBeansAndOfTheirType() {
		String[] policy = { "ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=10",
				"ratelimit.policies.api.window=1m" };
		// checked by name before any bean exists, looked up once it does: a bean processed like any other
		this.runner.withPropertyValues(policy)
			.withPropertyValues("ratelimit.policies.api.key=@tenant")
			.withBean("tenantName", String.class, () -> "acme")
			.withBean("tenant", KeyResolver.class, () -> (request) -> "acme")
			// the resolver reads nothing of the request
			.run((context) -> assertThat(context.getBean(RateLimitPolicyRegistry.class)
				.configured("api")
				.key()
				.resolve((RequestContext) null)).isEqualTo("acme"));
		this.runner.withPropertyValues(policy)
			.withPropertyValues("ratelimit.policies.api.key=@tenantName")
			.withBean("tenantName", String.class, () -> "acme")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.key",
					"KeyResolver"));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void invalidPropertiesAreDescribedBySpringBootsFailureAnalysis(CapturedOutput output) {
		failToStart("--ratelimit.policies.api.algorithm=gcra", "--ratelimit.policies.api.limit=0",
				"--ratelimit.policies.api.window=1s");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid value '0' for configuration property 'ratelimit.policies.api.limit'")
			.contains("Rate-limit policy 'api': limit must be between 1 and 1000000000 but was 0");
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void unknownAlgorithmsAreDescribedBySpringBootsFailureAnalysis(CapturedOutput output) {
		failToStart("--ratelimit.policies.api.algorithm=leaky-bucket", "--ratelimit.policies.api.limit=1",
				"--ratelimit.policies.api.window=1s");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Failed to bind properties under 'ratelimit.policies.api.algorithm'")
			.contains("leaky-bucket")
			.contains("TOKEN_BUCKET");
	}

	@Test
	void ratelimitIsBoundOnceByTheStartupCheckAndItsPoliciesBuiltOnce() {
		List<String> boundBySpringBoot = new CopyOnWriteArrayList<>();
		ConfigurationPropertiesBindHandlerAdvisor recorder = (handler) -> new AbstractBindHandler(handler) {

			@Override
			public <T> Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target, BindContext context) {
				if (context.getDepth() == 0) {
					boundBySpringBoot.add(name.toString());
				}
				return super.onStart(name, target, context);
			}

		};
		this.runner.withBean(ConfigurationPropertiesBindHandlerAdvisor.class, () -> recorder)
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=5",
					"ratelimit.policies.api.window=1m")
			.run((context) -> {
				assertThat(context.getBean(RateLimitProperties.class).policies()).containsKey("api");
				assertThat(boundBySpringBoot).as("Spring Boot's own binding").contains("spring.data.redis")
					.doesNotContain("ratelimit");
				assertThat(context.getBean(RateLimitPolicyRegistry.class).configured("api"))
					.isSameAs(context.getBean(RateLimitPropertiesCheck.class).registry(RateLimitOverrides.inMemory())
						.configured("api"));
			});
	}

	@Test
	void theConfigpropsEndpointReportsRatelimitBoundOnce() {
		this.runner.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=5",
				"ratelimit.policies.api.window=1m")
			.run((context) -> {
				ConfigurationPropertiesReportEndpoint endpoint = new ConfigurationPropertiesReportEndpoint(List.of(),
						Show.ALWAYS);
				endpoint.setApplicationContext(context);
				ConfigurationPropertiesBeanDescriptor ratelimit = endpoint.configurationPropertiesWithPrefix("ratelimit")
					.getContexts()
					.values()
					.iterator()
					.next()
					.getBeans()
					.get("ratelimit-" + RateLimitProperties.class.getName());
				assertThat(ratelimit).as("the ratelimit bean in the report").isNotNull();
				assertThat(ratelimit.getPrefix()).isEqualTo("ratelimit");
				assertThat(map(map(ratelimit.getProperties().get("policies")).get("api"))).containsEntry("limit", 5L)
					.containsEntry("algorithm", "GCRA");
			});
	}

	@Test
	void anApplicationThatEnablesTheRatelimitPropertiesItselfStartsWithOneBean() {
		this.runner.withUserConfiguration(EnablesRateLimitProperties.class)
			.withPropertyValues("ratelimit.policies.api.algorithm=gcra", "ratelimit.policies.api.limit=5",
					"ratelimit.policies.api.window=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RateLimitProperties.class);
				assertThat(context.getBean(RateLimitProperties.class).policies().get("api").limit()).isEqualTo(5);
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(RateLimitProperties.class)
	static class EnablesRateLimitProperties {

	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object value) {
		return (Map<String, Object>) value;
	}

	/** Runs an application the way Spring Boot starts one, with its failure analysis, expecting it to fail. */
	private static void failToStart(String... args) {
		SpringApplication application = new SpringApplication(MinimalApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run(args));
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class MinimalApplication {

	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		final RateLimitBackend backend = new LocalRateLimitBackend();

		@Bean
		RateLimitBackend myBackend() {
			return this.backend;
		}

	}

}
