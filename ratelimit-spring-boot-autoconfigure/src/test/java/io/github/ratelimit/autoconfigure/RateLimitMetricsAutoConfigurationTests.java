package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.testkit.RedisClusterServer;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit meters in an application with Spring Boot's metrics and observations, against a real Redis (and a
 * port nobody listens on for the failure modes): decisions by policy and outcome, the decision timer, errors by kind,
 * permits in flight, never an identity in a tag; the beans back off for the application's own.
 */
class RateLimitMetricsAutoConfigurationTests {

	private static final String IDENTITY = "alice-4711";

	private static final int NO_REDIS = RateLimitResilienceConfigurationTests.unusedPort();

	// "burst" is a sliding window log, not a fixed window: a fixed window's boundary (each whole minute) falling
	// between two checks of a test refilled it in CI and the expected denial did not come
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitMetricsAutoConfiguration.class, ObservationAutoConfiguration.class,
				MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.burst.algorithm=sliding-window-log", "ratelimit.policies.burst.limit=2",
				"ratelimit.policies.burst.window=1m", "ratelimit.policies.slots.algorithm=concurrency",
				"ratelimit.policies.slots.limit=3", "ratelimit.policies.slots.window=1m");

	@Test
	void decisionsAreCountedByPolicyAndOutcomeAndTimedByBackendAndOutcome() {
		withRedis().run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			RateLimitRequest request = RateLimitRequest.of(policies.get("burst"), IDENTITY);
			assertThat(limiter.check(request).allowed()).isTrue();
			assertThat(limiter.checkAsync(request).block().allowed()).isTrue();
			assertThat(limiter.check(request).allowed()).isFalse();
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(decisions(meters, "burst", "allowed")).isEqualTo(2);
			assertThat(decisions(meters, "burst", "denied")).isEqualTo(1);
			assertThat(timed(meters, "allowed")).isEqualTo(2);
			assertThat(timed(meters, "denied")).isEqualTo(1);
			assertNoIdentityInAnyTag(meters);
		});
	}

	@Test
	void permitsInFlightAreAGaugePerConcurrencyPolicy() {
		withRedis().run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.find("ratelimit.permits.active").gauges()).hasSize(1);
			RateLimitDecision decision = limiter.check(RateLimitRequest.of(policies.get("slots"), IDENTITY));
			assertThat(permitsActive(meters)).isEqualTo(1);
			decision.permit().release();
			assertThat(permitsActive(meters)).isZero();
			assertThat(meters.get("ratelimit.errors").tags("kind", "backend_error").functionCounter().count())
				.isZero();
			assertNoIdentityInAnyTag(meters);
		});
	}

	@Test
	void denialsFromTheDenialCacheCountAsDeniedDecisionsAndAsHits() {
		withRedis().withPropertyValues("ratelimit.redis.denial-cache.enabled=true").run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			RateLimitRequest request = RateLimitRequest.of(policies.get("burst"), IDENTITY);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("ratelimit.denial.cache.hits").functionCounter().count()).isZero();
			limiter.check(request);
			// the second admission takes the last of the window: Redis says until when the next is denied
			limiter.check(request);
			assertThat(meters.get("ratelimit.denial.cache.size").gauge().value()).isEqualTo(1);
			assertThat(limiter.check(request).allowed()).isFalse();
			assertThat(limiter.check(request).allowed()).isFalse();
			assertThat(limiter.checkAsync(request).block().allowed()).isFalse();
			assertThat(meters.get("ratelimit.denial.cache.hits").functionCounter().count()).isEqualTo(3);
			assertThat(decisions(meters, "burst", "denied")).isEqualTo(3);
			assertThat(timed(meters, "denied")).isEqualTo(3);
			assertNoIdentityInAnyTag(meters);
		});
	}

	@Test
	void withoutTheDenialCacheThereAreNoMetersOfIt() {
		withRedis().run((context) -> assertThat(context.getBean(MeterRegistry.class).find("ratelimit.denial.cache.hits")
			.meters()).isEmpty());
	}

	@Test
	void decisionsOfTheFailureModesAndTheErrorsAreCounted() {
		this.runner
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + NO_REDIS,
					"ratelimit.policies.strict.algorithm=gcra", "ratelimit.policies.strict.limit=2",
					"ratelimit.policies.strict.window=1m", "ratelimit.policies.strict.failure-mode=closed")
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
				assertThat(limiter.check(RateLimitRequest.of(policies.get("burst"), IDENTITY)).allowed()).isTrue();
				assertThat(limiter.check(RateLimitRequest.of(policies.get("strict"), IDENTITY)).allowed()).isFalse();
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(decisions(meters, "burst", "failed_open")).isEqualTo(1);
				assertThat(decisions(meters, "strict", "failed_closed")).isEqualTo(1);
				double errors = meters.get("ratelimit.errors").functionCounters().stream()
					.mapToDouble((counter) -> counter.count())
					.sum();
				assertThat(errors).isEqualTo(2);
				assertThat(meters.find("ratelimit.errors").functionCounters())
					.extracting((counter) -> counter.getId().getTag("kind"))
					.containsExactlyInAnyOrder("timeout", "backend_error", "circuit_open", "give_back_failed",
							"release_failed");
				assertNoIdentityInAnyTag(meters);
			});
	}

	@Test
	void backsOffForTheApplicationsOwnBeans() {
		this.runner.withPropertyValues("spring.data.redis.port=" + NO_REDIS)
			.withUserConfiguration(OwnMeters.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitDecisionMeterHandler.class)
					.hasSingleBean(RateLimitMeterBinder.class);
				assertThat(context.getBean(RateLimitDecisionMeterHandler.class))
					.isSameAs(context.getBean("ownHandler"));
				assertThat(context.getBean(RateLimitMeterBinder.class)).isSameAs(context.getBean("ownBinder"));
			});
	}

	/**
	 * On a Cluster each master has a breaker of its own: each has its Resilience4j meters, named after the
	 * configured breaker and the master's address, and the health contributor lists each master's state.
	 */
	@Test
	void onAClusterEachMasterHasItsOwnBreakerInTheMetersAndTheHealth() {
		RedisClusterServer cluster = RedisServers.cluster();
		cluster.flushAll();
		String nodes = cluster.nodes()
			.stream()
			.map((node) -> node.host() + ":" + node.port())
			.collect(Collectors.joining(","));
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=" + nodes, "ratelimit.redis.timeout=1s")
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
				RateLimitRequest.Builder spread = RateLimitRequest.builder();
				for (int i = 0; i < 30; i++) {
					limiter.check(RateLimitRequest.of(policies.get("burst"), "spread-" + i));
					spread.add(policies.get("burst"), "spread-" + i);
				}
				// one request on every master: decided per master, admitted as a whole (each has room for one more)
				assertThat(limiter.check(spread.build()).allowed()).isTrue();
				List<String> masters = cluster.masters().stream().map((master) -> master.host() + ":" + master.port())
					.toList();
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.find("resilience4j.circuitbreaker.state").tags("state", "closed").gauges())
					.extracting((gauge) -> gauge.getId().getTag("name"))
					.containsExactlyInAnyOrderElementsOf(masters.stream().map((master) -> "ratelimit-redis@" + master)
						.toList());
				Health health = context.getBean(RateLimitHealthIndicator.class).health();
				assertThat(health.getDetails()).containsEntry("backend", "redis-cluster")
					.containsEntry("circuitBreaker", "CLOSED");
				@SuppressWarnings("unchecked")
				Map<String, Map<String, Object>> shards = (Map<String, Map<String, Object>>) health.getDetails()
					.get("shards");
				assertThat(shards).containsOnlyKeys(masters)
					.allSatisfy((master, shard) -> assertThat(shard).containsEntry("circuitBreaker", "CLOSED")
						.containsKeys("failureRate", "failedCalls", "notPermittedCalls"));
			});
	}

	@Test
	void withoutAMeterRegistryThereAreNoMeters() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=" + NO_REDIS)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RateLimiter.class);
				assertThat(context).doesNotHaveBean(RateLimitDecisionMeterHandler.class)
					.doesNotHaveBean(RateLimitMeterBinder.class);
			});
	}

	/** The runner on a real Redis, emptied first. */
	private ApplicationContextRunner withRedis() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		// these tests count decisions, not time: a budget of 1 s keeps a cold first script call on a loaded machine
		// from being decided by the failure mode (the failure-mode test below uses a Redis that is not there)
		return this.runner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "ratelimit.redis.timeout=1s");
	}

	private static double decisions(MeterRegistry meters, String policy, String outcome) {
		return meters.get("ratelimit.decisions").tags("policy", policy, "outcome", outcome).counter().count();
	}

	private static long timed(MeterRegistry meters, String outcome) {
		return meters.get("ratelimit.decision").tags("backend", "redis", "outcome", outcome).timer().count();
	}

	private static double permitsActive(MeterRegistry meters) {
		return meters.get("ratelimit.permits.active").tags("policy", "slots").gauge().value();
	}

	/** Every tag of every meter: none holds the identity. */
	private static void assertNoIdentityInAnyTag(MeterRegistry meters) {
		assertThat(meters.getMeters()).extracting(Meter::getId)
			.filteredOn((id) -> id.getName().startsWith("ratelimit"))
			.isNotEmpty();
		assertThat(meters.getMeters()).flatExtracting((meter) -> meter.getId().getTags())
			.extracting(Tag::getValue)
			.noneMatch((value) -> value.contains("4711"));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnMeters {

		@Bean
		RateLimitDecisionMeterHandler ownHandler(ObjectProvider<MeterRegistry> meters) {
			return new RateLimitDecisionMeterHandler(meters);
		}

		@Bean
		RateLimitMeterBinder ownBinder(ObjectProvider<RateLimiter> limiter,
				ObjectProvider<RateLimitPolicyRegistry> policies) {
			return new RateLimitMeterBinder(limiter, policies);
		}

	}

}
