package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A user's application whose profile document replaces the filter rules of its base document with a shorter list
 * ({@code profile-rules.yml}: three rules, the third limiting {@code /shared/**}; {@code profile-rules-ops.yml}: two
 * rules, the second limiting {@code /open}). With the profile active it starts, and the profile's rules apply; the
 * same application without the profile applies the base rules. Real HTTP, real Redis.
 */
class ProfileRulesIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private static ConfigurableApplicationContext base;

	private static ConfigurableApplicationContext ops;

	@BeforeAll
	static void startBothApplications() {
		base = Instances.start(UserApplication.class, redis, "spring.config.name=profile-rules");
		ops = Instances.start(UserApplication.class, redis, "spring.config.name=profile-rules",
				"spring.profiles.active=ops");
	}

	@AfterAll
	static void stopBothApplications() {
		Instances.stop(base, ops);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
	}

	@Test
	void aPathOnlyTheBaseListLimitsIsNotLimitedWithTheProfile() {
		Http http = Instances.http(ops);
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> response = http.get("/shared/hello");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
		// without the profile, the base list's third rule limits it (policy base-only: 2 per hour)
		Http withoutProfile = Instances.http(base);
		assertThat(withoutProfile.status("/shared/hello")).isEqualTo(200);
		assertThat(withoutProfile.status("/shared/hello")).isEqualTo(200);
		assertThat(withoutProfile.status("/shared/hello")).isEqualTo(429);
	}

	@Test
	void theProfilesRulesAreEnforced() {
		Http http = Instances.http(ops);
		HttpResponse<String> admitted = http.get("/open");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"ops-only\";q=1;w=3600");
		assertThat(http.status("/open")).isEqualTo(429);
		for (int i = 0; i < 3; i++) {
			assertThat(http.status("/api/hello")).isEqualTo(200);
		}
		assertThat(http.status("/api/hello")).isEqualTo(429);
		// without the profile, /open has no rule
		HttpResponse<String> open = Instances.http(base).get("/open");
		assertThat(open.statusCode()).isEqualTo(200);
		assertThat(open.headers().firstValue("RateLimit-Policy")).isEmpty();
	}

	/** The user's application: its configuration is in {@code profile-rules*.yml}. */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(UserController.class)
	static class UserApplication {

	}

	@RestController
	static class UserController {

		@GetMapping({ "/api/hello", "/shared/hello", "/open" })
		String hello() {
			return "hello";
		}

	}

}
