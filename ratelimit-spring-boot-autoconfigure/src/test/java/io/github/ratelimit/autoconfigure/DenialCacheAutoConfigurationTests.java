package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpointAutoConfiguration;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RedisOverrideStore;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local denial cache as the starter wires it: off by default, for the Redis backend only, its size validated
 * naming the property, and every instance's cache forgetting what the {@code ratelimits} endpoint resets or
 * overrides on any instance (two applications on one real Redis).
 */
class DenialCacheAutoConfigurationTests {

	private static final Duration PROPAGATION = Duration.ofSeconds(10);

	// "api" is a sliding window log: a fixed window's end (each whole hour) would lift the denials held mid-test
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitsEndpointAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.algorithm=sliding-window-log", "ratelimit.policies.api.limit=2",
				"ratelimit.policies.api.window=1h", "ratelimit.policies.api.key=header:X-Api-Key",
				"management.endpoints.web.exposure.include=ratelimits",
				"ratelimit.redis.timeout=1s");

	private ApplicationContextRunner onRedis() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		return this.runner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port());
	}

	private static RateLimitDenialCache cache(AssertableApplicationContext context) {
		RateLimitDenialCache cache = ((DefaultRateLimiter) context.getBean(RateLimiter.class)).denialCache();
		assertThat(cache).as("the denial cache").isNotNull();
		return cache;
	}

	@Test
	void offByDefaultAndOnlyOverRedis() {
		onRedis().run((context) -> assertThat(((DefaultRateLimiter) context.getBean(RateLimiter.class)).denialCache())
			.isNull());
		onRedis().withPropertyValues("ratelimit.redis.denial-cache.enabled=true")
			.run((context) -> assertThat(cache(context).size()).isZero());
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.withPropertyValues("ratelimit.redis.denial-cache.enabled=true")
			.run((context) -> assertThat(((DefaultRateLimiter) context.getBean(RateLimiter.class)).denialCache())
				.as("the local backend needs no cache of its own denials")
				.isNull());
	}

	@Test
	void aMaximumSizeBelowOneStopsTheStartNamingTheProperty() {
		onRedis().withPropertyValues("ratelimit.redis.denial-cache.enabled=true",
				"ratelimit.redis.denial-cache.maximum-size=0")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.redis.denial-cache.maximum-size", "must be at least 1"));
	}

	@Test
	void resetsAndOverridesThroughTheEndpointReachTheCacheOfEveryInstance() {
		ApplicationContextRunner instance = onRedis().withPropertyValues("ratelimit.redis.denial-cache.enabled=true");
		instance.run((first) -> instance.run((second) -> {
			Instance a = new Instance(first);
			Instance b = new Instance(second);
			a.check();
			a.check();
			a.deniedFromTheCache();
			b.deniedFromTheCache();

			// a reset on one instance: its cache forgets at once, the other's when the announcement arrives
			a.endpoint.reset("api", "client-7", null, null, SecurityContext.NONE);
			assertThat(a.cache.size()).isZero();
			Wait.until("the other instance hears of the reset", PROPAGATION, () -> b.cache.size() == 0);
			long hits = b.cache.hitCount();
			assertThat(b.check()).as("admitted by Redis after the reset").isTrue();
			assertThat(b.cache.hitCount()).isEqualTo(hits);
			assertThat(a.check()).isTrue();

			// a policy override, set and removed, and an identity override
			a.deniedFromTheCache();
			b.deniedFromTheCache();
			a.endpoint.overridePolicy("api", 3L, null, null, null, null, SecurityContext.NONE);
			Wait.until("both instances forget the policy's denials", PROPAGATION,
					() -> a.cache.size() == 0 && b.cache.size() == 0);
			assertThat(b.check()).as("the third request under the raised limit").isTrue();
			a.deniedFromTheCache();
			b.deniedFromTheCache();
			a.endpoint.removeOverride("api", SecurityContext.NONE);
			Wait.until("both instances forget the overridden policy's denials", PROPAGATION,
					() -> a.cache.size() == 0 && b.cache.size() == 0);
			a.deniedFromTheCache();
			b.deniedFromTheCache();
			b.endpoint.overrideKey("api", "client-7", 10L, null, null, null, null, SecurityContext.NONE);
			Wait.until("both instances forget the denials of the policy of an identity override", PROPAGATION,
					() -> a.cache.size() == 0 && b.cache.size() == 0);
			assertThat(a.check()).as("the identity's own limit applies").isTrue();
		}));
	}

	/** One application: its limiter, its cache and its endpoint, checking one identity of the policy. */
	private static final class Instance {

		final RateLimiter limiter;

		final RateLimitDenialCache cache;

		final RateLimitsEndpoint endpoint;

		final RateLimitPolicyRegistry registry;

		Instance(AssertableApplicationContext context) {
			this.limiter = context.getBean(RateLimiter.class);
			this.cache = cache(context);
			this.endpoint = context.getBean(RateLimitsEndpoint.class);
			this.registry = context.getBean(RateLimitPolicyRegistry.class);
			// subscribed, and past its first read of the count of resets (which makes the cache forget everything)
			Wait.until("the instance listens for announcements", PROPAGATION,
					context.getBean(RedisOverrideStore.class)::isListening);
		}

		/** A request of the identity as the enforcer makes it: its effective policy, its source-qualified identity. */
		boolean check() {
			ConfiguredPolicy configured = this.registry.configured("api");
			return this.limiter
				.check(RateLimitRequest.of(this.registry.effective(configured, "client-7", null),
						configured.key().identity("client-7")))
				.allowed();
		}

		/** Requests until denied, then once more: that one must come from the cache. */
		void deniedFromTheCache() {
			for (int i = 0; i < 20 && check(); i++) {
				// the quota is being used up
			}
			long hits = this.cache.hitCount();
			assertThat(check()).isFalse();
			assertThat(this.cache.hitCount()).as("denied from the cache").isEqualTo(hits + 1);
		}

	}

}
