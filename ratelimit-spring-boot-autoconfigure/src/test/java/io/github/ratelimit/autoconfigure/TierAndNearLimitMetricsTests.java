package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.security.Principal;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.autoconfigure.servlet.RateLimitServletAutoConfiguration;
import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationContext;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.decisions} by tier and {@code ratelimit.near.limit} in an application on a real Redis, with two
 * tiers: requests go through the servlet filter as three users, one per tier and one in a tier nobody configured,
 * each until refused. Counts, never timings.
 */
class TierAndNearLimitMetricsTests {

	/** The tier of each user, as an application's plan lookup would answer it; carol has none configured. */
	private static final Map<String, String> PLANS = Map.of("alice", "gold", "bob", "silver", "carol", "trial");

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitServletAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
				ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withBean("plans", KeyResolver.class, () -> (request) -> plan(request.principal()))
		.withPropertyValues("ratelimit.policies.api.algorithm=sliding-window-log", "ratelimit.policies.api.limit=2",
				"ratelimit.policies.api.window=1h", "ratelimit.policies.api.key=principal",
				"ratelimit.policies.api.tiers.key=@plans", "ratelimit.policies.api.tiers.limits.gold.limit=10",
				"ratelimit.policies.api.tiers.limits.silver.limit=5",
				// a bucket of 10 refilling 2 an hour: near the limit is measured against the 10 it can hold
				"ratelimit.policies.bucket.algorithm=token-bucket", "ratelimit.policies.bucket.limit=2",
				"ratelimit.policies.bucket.burst=10", "ratelimit.policies.bucket.window=1h",
				"ratelimit.policies.bucket.key=principal",
				"ratelimit.policies.slots.algorithm=concurrency", "ratelimit.policies.slots.limit=5",
				"ratelimit.policies.slots.window=1h", "ratelimit.policies.slots.key=principal",
				"ratelimit.filter.rules[0].paths=/api", "ratelimit.filter.rules[0].policies=api",
				"ratelimit.filter.rules[1].paths=/bucket", "ratelimit.filter.rules[1].policies=bucket",
				"ratelimit.filter.rules[2].paths=/slots", "ratelimit.filter.rules[2].policies=slots");

	@Test
	void decisionsCarryTheirTierAndAdmissionsLeavingLessThanAFifthAreNearTheLimit() {
		withRedis().run((context) -> {
			assertThat(untilRefused(context, "api", "alice")).isEqualTo(10);
			assertThat(untilRefused(context, "api", "bob")).isEqualTo(5);
			assertThat(untilRefused(context, "api", "carol")).isEqualTo(2);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(decisions(meters, "api", "gold", "allowed")).isEqualTo(10);
			assertThat(decisions(meters, "api", "gold", "denied")).isEqualTo(1);
			assertThat(decisions(meters, "api", "silver", "allowed")).isEqualTo(5);
			assertThat(decisions(meters, "api", "silver", "denied")).isEqualTo(1);
			assertThat(decisions(meters, "api", "none", "allowed")).as("a tier name nobody configured").isEqualTo(2);
			assertThat(decisions(meters, "api", "none", "denied")).isEqualTo(1);
			assertThat(meters.find("ratelimit.decisions").counters()).extracting((c) -> c.getId().getTag("tier"))
				.containsOnly("gold", "silver", "none");
			// remaining below 0.2 of the limit: gold 1 and 0 of 10, silver 0 of 5, none 0 of 2; refusals never
			assertThat(nearLimit(meters, "api", "gold")).isEqualTo(2);
			assertThat(nearLimit(meters, "api", "silver")).isEqualTo(1);
			assertThat(nearLimit(meters, "api", "none")).isEqualTo(1);
			// a bucket of 10: below 2 remaining, whatever its refill rate
			assertThat(untilRefused(context, "bucket", "alice")).isEqualTo(10);
			assertThat(nearLimit(meters, "bucket", "none")).isEqualTo(2);
			// concurrency: below 1 of 5 permits free, with every permit still held
			assertThat(nestedUntilRefused(context, "slots", "alice")).isEqualTo(5);
			assertThat(nearLimit(meters, "slots", "none")).isEqualTo(1);
		});
	}

	@Test
	void theRatioIsConfigurable() {
		withRedis().withPropertyValues("ratelimit.metrics.near-limit-ratio=0.5").run((context) -> {
			assertThat(untilRefused(context, "api", "alice")).isEqualTo(10);
			// remaining 4, 3, 2, 1, 0 of 10 are below half
			assertThat(nearLimit(context.getBean(MeterRegistry.class), "api", "gold")).isEqualTo(5);
		});
	}

	@Test
	void aRatioOfZeroCountsNothingNearTheLimit() {
		withRedis().withPropertyValues("ratelimit.metrics.near-limit-ratio=0").run((context) -> {
			assertThat(untilRefused(context, "api", "alice")).isEqualTo(10);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(decisions(meters, "api", "gold", "allowed")).isEqualTo(10);
			assertThat(meters.find(RateLimitDecisionMeterHandler.NEAR_LIMIT).counters()).isEmpty();
		});
	}

	@Test
	void aRatioOutsideZeroToOneFailsTheStartNamingTheProperty() {
		for (String ratio : List.of("1", "1.5", "-0.1", "NaN")) {
			this.runner.withPropertyValues("ratelimit.metrics.near-limit-ratio=" + ratio)
				.run((context) -> assertInvalidProperty(context.getStartupFailure(),
						"ratelimit.metrics.near-limit-ratio", "must be at least 0 and below 1"));
		}
	}

	/** Requests a path as a user through the filter until refused; answers how many were admitted. */
	private static int untilRefused(ApplicationContext context, String policy, String user) throws Exception {
		Filter filter = context.getBean(FilterRegistrationBean.class).getFilter();
		for (int admitted = 0; admitted < 100; admitted++) {
			if (request(filter, policy, user, new MockFilterChain()) == 429) {
				return admitted;
			}
		}
		throw new AssertionError(policy + " never refused " + user);
	}

	/**
	 * Requests a path as a user, each request sent from inside the previous one's chain, so that all hold their
	 * concurrency permits together, until refused; answers how many were admitted.
	 */
	private static int nestedUntilRefused(ApplicationContext context, String policy, String user) throws Exception {
		Filter filter = context.getBean(FilterRegistrationBean.class).getFilter();
		int[] admitted = { 0 };
		FilterChain[] inside = new FilterChain[1];
		inside[0] = (request, response) -> {
			admitted[0]++;
			assertThat(admitted[0]).as(policy + " never refused " + user).isLessThan(100);
			request(filter, policy, user, inside[0]);
		};
		request(filter, policy, user, inside[0]);
		return admitted[0];
	}

	private static int request(Filter filter, String policy, String user, FilterChain chain)
			throws IOException, ServletException {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/" + policy);
		request.setUserPrincipal(() -> user);
		MockHttpServletResponse response = new MockHttpServletResponse();
		filter.doFilter(request, response, chain);
		assertThat(response.getStatus()).as("decided by Redis, no failure mode").isIn(200, 429);
		return response.getStatus();
	}

	private static @Nullable String plan(@Nullable Principal principal) {
		return (principal != null) ? PLANS.get(principal.getName()) : null;
	}

	/** The runner on a real Redis, emptied first; a budget of 1 s so a loaded machine's slow call is no failure mode. */
	private WebApplicationContextRunner withRedis() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		return this.runner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "ratelimit.redis.timeout=1s");
	}

	private static double decisions(MeterRegistry meters, String policy, String tier, String outcome) {
		return meters.get("ratelimit.decisions").tags("policy", policy, "tier", tier, "outcome", outcome).counter()
			.count();
	}

	private static double nearLimit(MeterRegistry meters, String policy, String tier) {
		Counter counter = meters.find(RateLimitDecisionMeterHandler.NEAR_LIMIT).tags("policy", policy, "tier", tier)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
