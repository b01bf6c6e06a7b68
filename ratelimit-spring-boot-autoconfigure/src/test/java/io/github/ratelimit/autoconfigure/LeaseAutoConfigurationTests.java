package io.github.ratelimit.autoconfigure;

import java.util.UUID;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leased quotas as the starter wires them: off unless a policy asks, the settings checked naming the property, and
 * two applications on one real Redis, where what one holds is the other's once the first one stops.
 */
class LeaseAutoConfigurationTests {

	private final RedisServer redis = RedisServers.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
				"spring.data.redis.port=" + this.redis.port(), "ratelimit.redis.timeout=1s",
				"ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=50",
				"ratelimit.policies.api.window=1h", "ratelimit.policies.api.key=global");

	@Test
	void noPolicyLeasedNoLeasingBackend() {
		this.runner.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(LeasingBackend.class));
	}

	@Test
	void aLeaseOnAnAlgorithmThatCannotBeLeasedFailsTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.api.algorithm=sliding-window-log",
				"ratelimit.policies.api.lease.enabled=true")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.lease.enabled",
					"token-bucket and fixed-window only", "sliding-window-log"));
	}

	@Test
	void aLapseBoundTooShortFailsTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.api.lease.enabled=true",
				"ratelimit.policies.api.lease.lapse-after=1ms")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.policies.api.lease.lapse-after", "between 10ms and 1h"));
	}

	@Test
	void aLapseBoundWithinAFewRedisTimeoutsFailsTheStartNamingBothProperties() {
		this.runner.withPropertyValues("ratelimit.policies.api.lease.enabled=true",
				"ratelimit.policies.api.lease.lapse-after=20ms", "ratelimit.policies.api.lease.idle-after=10ms",
				"ratelimit.redis.timeout=50ms")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.policies.api.lease.lapse-after", "ratelimit.redis.timeout"));
	}

	@Test
	void anIdleTimeLongerThanTheLapseBoundFailsTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.policies.api.lease.enabled=true",
				"ratelimit.policies.api.lease.idle-after=5s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.policies.api.lease.idle-after", "lapse-after"));
	}

	@Test
	void aLeaseWithoutRedisFailsTheStartNamingTheProperty() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.limit=50",
					"ratelimit.policies.api.window=1h", "ratelimit.policies.api.key=global",
					"ratelimit.policies.api.lease.enabled=true")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.policies.api.lease.enabled",
					"no Redis connection"));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void theApplicationsOwnLimiterLeavesTheLeaseUnusedWithAWarning(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.policies.api.lease.enabled=true",
				"ratelimit.policies.api.lease.lapse-after=10s")
			.withBean(RateLimiter.class, () -> new DefaultRateLimiter(
					new LocalRateLimitBackend(100, LocalRateLimitBackend.systemClock())))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("ratelimit.policies.api.lease.enabled set, but the application's own RateLimiter");
			});
	}

	/** One application holds the whole limit in a slice; once it stops, the other admits all it did not spend. */
	@Test
	void twoApplicationsShareTheLimitAndAStoppedOneGivesItsSliceBack() {
		String policy = "leased" + UUID.randomUUID().toString().substring(0, 8);
		ApplicationContextRunner leased = this.runner.withPropertyValues(
				"ratelimit.policies." + policy + ".algorithm=token-bucket",
				"ratelimit.policies." + policy + ".limit=50", "ratelimit.policies." + policy + ".window=1h",
				"ratelimit.policies." + policy + ".lease.enabled=true",
				"ratelimit.policies." + policy + ".lease.max-slice=50",
				"ratelimit.policies." + policy + ".lease.lapse-after=10m",
				"ratelimit.policies." + policy + ".lease.idle-after=10m");
		leased.run((other) -> {
			assertThat(other).hasSingleBean(LeasingBackend.class);
			int[] holderAdmitted = new int[1];
			leased.run((holder) -> {
				holderAdmitted[0] = admitted(holder, policy, 1);
				assertThat(admitted(other, policy, 50)).as("while the holder holds the limit").isZero();
			});
			// the holder's context closed: its slice was given back on stop
			assertThat(holderAdmitted[0]).isOne();
			assertThat(admitted(other, policy, 60)).isEqualTo(49);
		});
	}

	private static int admitted(AssertableApplicationContext context, String policyName, int requests) {
		RateLimitPolicy policy = context.getBean(RateLimitPolicyRegistry.class).get(policyName);
		RateLimiter limiter = context.getBean(RateLimiter.class);
		int admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (limiter.check(RateLimitRequest.of(policy, "all")).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

}
