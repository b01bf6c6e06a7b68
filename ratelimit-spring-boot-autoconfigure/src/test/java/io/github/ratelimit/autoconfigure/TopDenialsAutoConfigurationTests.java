package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpointAutoConfiguration;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RedisTopDenials;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;

import org.assertj.core.api.InstanceOfAssertFactories;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The top denials as the starter wires them: on by default, shared through Redis when there is Redis, this
 * instance's own on the local backend, off with {@code ratelimit.top.enabled=false}, every enforced denial recorded,
 * a tiered identity's quota read under its tier, and {@code ratelimit.top.*} validated naming the property.
 */
class TopDenialsAutoConfigurationTests {

	// "api" is a sliding window log: a fixed window's boundary (each whole hour) between two checks would refill it
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitsEndpointAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.algorithm=sliding-window-log", "ratelimit.policies.api.limit=1",
				"ratelimit.policies.api.window=1h", "ratelimit.policies.api.key=global",
				"management.endpoints.web.exposure.include=ratelimits", "ratelimit.redis.timeout=1s");

	private ApplicationContextRunner onRedis() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		return this.runner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port());
	}

	@Test
	void onByDefaultSharedThroughRedisAndEveryEnforcedDenialIsRecorded() {
		onRedis().run((context) -> {
			assertThat(context).hasSingleBean(TopDenials.class).hasSingleBean(RedisTopDenials.class);
			check(context);
			check(context);
			assertThat(context.getBean(TopDenials.class).summary("api").identities())
				.isEqualTo(Map.of("global", 1L));
			Map<String, Object> top = context.getBean(RateLimitsEndpoint.class).usage("api", "top", null);
			assertThat(top).containsEntry("denials", 1L).containsEntry("digestOnly", false);
		});
	}

	@Test
	void aTieredIdentityShowsTheQuotaOfItsTier() {
		onRedis().withPropertyValues("ratelimit.policies.api.tiers.key=principal",
				"ratelimit.policies.api.tiers.limits.gold.limit=5").run((context) -> {
					RateLimitPolicy gold = context.getBean(RateLimitPolicyRegistry.class)
						.configured("api")
						.tiers()
						.get("gold");
					RateLimitBackend backend = context.getBean(RateLimitBackend.class);
					backend.acquire(RateLimitRequest.of(gold, "global"), "t").block();
					backend.acquire(RateLimitRequest.of(gold, "global"), "t").block();
					context.getBean(TopDenials.class).record("api", "global", "gold");
					Map<String, Object> top = context.getBean(RateLimitsEndpoint.class).usage("api", "top", null);
					// the base policy (limit 1) would say 0
					assertThat(top).extractingByKey("top")
						.asInstanceOf(InstanceOfAssertFactories.LIST)
						.singleElement()
						.asInstanceOf(InstanceOfAssertFactories.MAP)
						.containsEntry("identity", "global")
						.containsEntry("remaining", 3L);
				});
	}

	@Test
	void theLocalBackendAnswersWithThisInstancesOwnSummary() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class)).run((context) -> {
			assertThat(context).hasSingleBean(TopDenials.class).doesNotHaveBean(RedisTopDenials.class);
			check(context);
			check(context);
			Map<String, Object> fleet = context.getBean(RateLimitsEndpoint.class).fleetTop("top");
			assertThat(fleet).extractingByKey("policies").asInstanceOf(InstanceOfAssertFactories.MAP)
				.containsOnlyKeys("api");
		});
	}

	@Test
	void offWhenDisabled() {
		onRedis().withPropertyValues("ratelimit.top.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(TopDenials.class).doesNotHaveBean(RedisTopDenials.class);
			assertThat(context.getBean(RateLimitsEndpoint.class).fleetTop("top")).containsEntry("enabled", false);
			assertThat(context.getBean(RateLimitsEndpoint.class).fleetTop("other")).isNull();
		});
	}

	@Test
	void invalidSettingsStopTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.top.capacity=0")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.top.capacity",
					"between 1 and 1024"));
		this.runner.withPropertyValues("ratelimit.top.capacity=1025")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.top.capacity",
					"between 1 and 1024"));
		this.runner.withPropertyValues("ratelimit.top.window=0s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.top.window",
					"positive duration"));
		this.runner.withPropertyValues("ratelimit.top.publish-interval=-1s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.top.publish-interval",
					"at least 100ms"));
		// below a millisecond the publisher would repeat without pause
		this.runner.withPropertyValues("ratelimit.top.publish-interval=500us")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.top.publish-interval",
					"at least 100ms"));
		this.runner.withPropertyValues("ratelimit.overrides.reconcile-interval=500us")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.overrides.reconcile-interval", "at least 1ms"));
		// a reconcile interval accepted before the floor (only positive was asked) is still accepted
		onRedis().withPropertyValues("ratelimit.top.publish-interval=100ms", "ratelimit.overrides.reconcile-interval=50ms")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/** One check of the policy (keyed {@code global}: no request needed) through the enforcer, as a filter makes it. */
	private static void check(AssertableApplicationContext context) {
		RateLimitEnforcer enforcer = context.getBean(RateLimitEnforcer.class);
		RateLimitEnforcer.Target target = new RateLimitEnforcer.Target(
				context.getBean(RateLimitPolicyRegistry.class).configured("api"), null, 0);
		enforcer.checkAsync(null, List.of(target), null, null).block();
	}

}
