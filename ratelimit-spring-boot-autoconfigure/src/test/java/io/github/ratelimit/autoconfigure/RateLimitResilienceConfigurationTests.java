package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.Enforcement;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.RateLimitOverrides;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.testkit.RedisServer;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure-mode properties, the time budget and the circuit breaker as configured, their validation, and the
 * {@code ratelimit} health contributor. Redis here is a port nothing listens on: what an application sees when it
 * starts without Redis.
 */
class RateLimitResilienceConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + unusedPort(),
				"ratelimit.policies.plain.algorithm=gcra", "ratelimit.policies.plain.limit=2",
				"ratelimit.policies.plain.window=1m", "ratelimit.policies.strict.algorithm=fixed-window",
				"ratelimit.policies.strict.limit=2", "ratelimit.policies.strict.window=1m",
				"ratelimit.policies.strict.failure-mode=closed", "ratelimit.policies.own.algorithm=token-bucket",
				"ratelimit.policies.own.limit=2", "ratelimit.policies.own.window=1m",
				"ratelimit.policies.own.failure-mode=LOCAL");

	@Test
	void failureModesDefaultToOpenAndArePerPolicy() {
		this.runner.run((context) -> {
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			assertThat(policies.get("plain").failureMode()).isEqualTo(FailureMode.OPEN);
			assertThat(policies.get("strict").failureMode()).isEqualTo(FailureMode.CLOSED);
			assertThat(policies.get("own").failureMode()).isEqualTo(FailureMode.LOCAL);
		});
		this.runner.withPropertyValues("ratelimit.failure-mode=local").run((context) -> {
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			assertThat(policies.get("plain").failureMode()).isEqualTo(FailureMode.LOCAL);
			assertThat(policies.get("strict").failureMode()).isEqualTo(FailureMode.CLOSED);
		});
	}

	/**
	 * A Redis that accepts connections but answers nothing (frozen with SIGSTOP, or a hung server): the client's
	 * command timeout here is two minutes, so without a bound of its own the start would wait that long for the
	 * warm-up and the overrides. The timeout of this test is far below it. Once Redis answers again, enforcement
	 * starts without a restart. (Closing the context while Redis is still frozen would wait for Spring Data Redis's
	 * connection factory, whose stop waits for the connect in progress: the test thaws Redis first.)
	 */
	@Test
	@Timeout(value = 60, unit = TimeUnit.SECONDS)
	void anApplicationStartsWhileRedisIsFrozenAndDecidesByTheFailureModesUntilItAnswers() {
		try (RedisServer frozen = RedisServer.start()) {
			frozen.freeze();
			try {
				new ApplicationContextRunner()
					.withConfiguration(
							AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
					.withPropertyValues("spring.data.redis.host=" + frozen.host(),
							"spring.data.redis.port=" + frozen.port(), "spring.data.redis.timeout=120s",
							"ratelimit.policies.plain.algorithm=gcra", "ratelimit.policies.plain.limit=2",
							"ratelimit.policies.plain.window=1m")
					.run((context) -> {
						assertThat(context).hasNotFailed();
						RateLimiter limiter = context.getBean(RateLimiter.class);
						RateLimitPolicy plain = context.getBean(RateLimitPolicyRegistry.class).get("plain");
						assertThat(limiter.check(RateLimitRequest.of(plain, "frozen")).decisions().get(0).enforcement())
							.isEqualTo(Enforcement.FAILED_OPEN);
						frozen.thaw();
						// the circuit opened on the frozen calls: enforcement resumes once it lets a call through
						RateLimitDecision first = limiter.check(RateLimitRequest.of(plain, "probe"));
						while (first.decisions().get(0).enforcement() != Enforcement.ENFORCED) {
							Thread.sleep(100);
							first = limiter.check(RateLimitRequest.of(plain, "probe"));
						}
						// a decision the (50 ms) budget missed on this busy machine is decided by the failure mode
						// and its late answer undone: the enforced ones are exact, two admitted then a denial
						List<Boolean> enforced = new ArrayList<>();
						while (enforced.size() < 3) {
							RateLimitDecision decision = limiter.check(RateLimitRequest.of(plain, "thawed"));
							if (decision.decisions().get(0).enforcement() == Enforcement.ENFORCED) {
								enforced.add(decision.allowed());
							}
						}
						assertThat(enforced).containsExactly(true, true, false);
					});
			}
			finally {
				frozen.thaw();
			}
		}
	}

	@Test
	void anApplicationStartsWithoutRedisAndItsPoliciesFollowTheirFailureModes() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			RateLimitPolicyRegistry policies = context.getBean(RateLimitPolicyRegistry.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitDecision open = limiter.check(RateLimitRequest.of(policies.get("plain"), "a"));
			assertThat(open.allowed()).isTrue();
			assertThat(open.decisions().get(0).enforcement()).isEqualTo(Enforcement.FAILED_OPEN);
			RateLimitDecision closed = limiter.check(RateLimitRequest.of(policies.get("strict"), "a"));
			assertThat(closed.failedClosed()).isTrue();
			assertThat(closed.retryAfter()).isEqualTo(Duration.ofSeconds(1));
			for (int i = 0; i < 2; i++) {
				assertThat(limiter.check(RateLimitRequest.of(policies.get("own"), "a")).allowed()).isTrue();
			}
			RateLimitDecision local = limiter.check(RateLimitRequest.of(policies.get("own"), "a"));
			assertThat(local.allowed()).isFalse();
			assertThat(local.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
		});
	}

	@Test
	void theBudgetAndTheBreakerComeFromTheProperties() {
		this.runner
			.withPropertyValues("ratelimit.redis.timeout=120ms",
					"ratelimit.redis.circuit-breaker.wait-duration-in-open-state=3s",
					"ratelimit.redis.circuit-breaker.sliding-window-size=40",
					"ratelimit.redis.circuit-breaker.minimum-number-of-calls=10",
					"ratelimit.redis.circuit-breaker.failure-rate-threshold=25",
					"ratelimit.redis.circuit-breaker.permitted-number-of-calls-in-half-open-state=7")
			.run((context) -> {
				DefaultRateLimiter limiter = context.getBean(DefaultRateLimiter.class);
				assertThat(limiter.timeout()).isEqualTo(Duration.ofMillis(120));
				CircuitBreaker breaker = limiter.circuitBreaker();
				assertThat(breaker).isNotNull();
				assertThat(breaker.getName()).isEqualTo(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME);
				assertThat(breaker.getCircuitBreakerConfig().getSlidingWindowSize()).isEqualTo(40);
				assertThat(breaker.getCircuitBreakerConfig().getMinimumNumberOfCalls()).isEqualTo(10);
				assertThat(breaker.getCircuitBreakerConfig().getFailureRateThreshold()).isEqualTo(25f);
				assertThat(breaker.getCircuitBreakerConfig().getPermittedNumberOfCallsInHalfOpenState()).isEqualTo(7);
				assertThat(breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1))
					.isEqualTo(3000L);
				RateLimitDecision closed = limiter
					.check(RateLimitRequest.of(context.getBean(RateLimitPolicyRegistry.class).get("strict"), "b"));
				assertThat(closed.retryAfter()).isEqualTo(Duration.ofSeconds(3));
			});
		this.runner.withPropertyValues("ratelimit.redis.circuit-breaker.enabled=false")
			.run((context) -> assertThat(context.getBean(DefaultRateLimiter.class).circuitBreaker()).isNull());
	}

	@Test
	void invalidResilienceSettingsFailAtStartupNamingTheProperty() {
		assertInvalid("ratelimit.redis.timeout=0ms", "ratelimit.redis.timeout");
		assertInvalid("ratelimit.redis.circuit-breaker.failure-rate-threshold=150",
				"ratelimit.redis.circuit-breaker.failure-rate-threshold");
		assertInvalid("ratelimit.redis.circuit-breaker.sliding-window-size=0",
				"ratelimit.redis.circuit-breaker.sliding-window-size");
		assertInvalid("ratelimit.redis.circuit-breaker.wait-duration-in-open-state=-1s",
				"ratelimit.redis.circuit-breaker.wait-duration-in-open-state");
		assertInvalid("ratelimit.redis.max-reconnect-delay=-1s", "ratelimit.redis.max-reconnect-delay");
		assertInvalid("ratelimit.policies.plain.failure-mode=sometimes", "ratelimit.policies.plain.failure-mode");
		assertInvalid("ratelimit.failure-mode=never", "ratelimit.failure-mode");
	}

	@Test
	void healthSaysDegradedButStaysUpUnlessAskedOtherwise() {
		this.runner.run((context) -> {
			RateLimitHealthIndicator health = context.getBean(RateLimitHealthIndicator.class);
			assertThat(context.getBeanNamesForType(RateLimitHealthIndicator.class))
				.containsExactly("ratelimitHealthIndicator");
			RateLimiter limiter = context.getBean(RateLimiter.class);
			limiter.check(RateLimitRequest.of(context.getBean(RateLimitPolicyRegistry.class).get("plain"), "c"));
			Health degraded = health.health();
			assertThat(degraded.getStatus()).isEqualTo(Status.UP);
			assertThat(degraded.getDetails()).containsEntry("degraded", true)
				.containsEntry("backend", "redis")
				.containsKey("lastFailure")
				.containsKey("circuitBreaker");
		});
		this.runner.withPropertyValues("ratelimit.health.down-when-degraded=true").run((context) -> {
			context.getBean(RateLimiter.class)
				.check(RateLimitRequest.of(context.getBean(RateLimitPolicyRegistry.class).get("plain"), "c"));
			assertThat(context.getBean(RateLimitHealthIndicator.class).health().getStatus()).isEqualTo(Status.DOWN);
		});
		this.runner.withPropertyValues("management.health.ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	private void assertInvalid(String property, String named) {
		this.runner.withPropertyValues(property)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.satisfies((failure) -> assertThat(stackOf(failure)).contains(named)));
	}

	/** A loopback port nothing listens on (it was free a moment ago): connections to it are refused. */
	static int unusedPort() {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	private static String stackOf(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.append(cause.getMessage()).append('\n');
		}
		return messages.toString();
	}

	/**
	 * The local fallback counts every admission Redis makes for a {@code local} policy; a reset (here announced, as
	 * the endpoint does after resetting Redis) starts its count afresh too, so the next outage admits the identity.
	 */
	@Test
	@Timeout(value = 60, unit = TimeUnit.SECONDS)
	void aResetAnnouncedToTheApplicationStartsTheLocalFallbacksCountAfresh() {
		try (RedisServer redis = RedisServer.start()) {
			new ApplicationContextRunner()
				.withConfiguration(
						AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
						"ratelimit.redis.timeout=1s", "ratelimit.policies.own.algorithm=token-bucket",
						"ratelimit.policies.own.limit=1", "ratelimit.policies.own.window=1h",
						"ratelimit.policies.own.failure-mode=local")
				.run((context) -> {
					RateLimiter limiter = context.getBean(RateLimiter.class);
					RateLimitPolicy own = context.getBean(RateLimitPolicyRegistry.class).get("own");
					RateLimitRequest request = RateLimitRequest.of(own, "ip:203.0.113.9");
					RateLimitDecision admitted = limiter.check(request);
					assertThat(admitted.decisions().get(0).enforcement()).isEqualTo(Enforcement.ENFORCED);
					assertThat(admitted.allowed()).isTrue();
					context.getBean(RateLimitOverrides.class).announceReset("own", "ip:203.0.113.9");
					redis.kill();
					RateLimitDecision afresh = limiter.check(request);
					assertThat(afresh.decisions().get(0).enforcement()).isEqualTo(Enforcement.LOCAL_FALLBACK);
					assertThat(afresh.allowed()).isTrue();
					assertThat(limiter.check(request).allowed()).isFalse();
				});
		}
	}

}
