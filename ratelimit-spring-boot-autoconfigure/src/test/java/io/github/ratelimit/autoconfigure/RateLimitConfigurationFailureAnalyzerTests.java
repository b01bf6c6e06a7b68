package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The configuration mistakes a new user makes, each started the way Spring Boot starts an application: every one
 * stops the start with Spring Boot's failure report, naming the property and what to do, without a stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitConfigurationFailureAnalyzerTests {

	@Test
	void aMisspelledPolicyFieldNamesTheFieldItMeant(CapturedOutput output) {
		failToStart("--ratelimit.policies.per-client.algorithm=gcra", "--ratelimit.policies.per-client.limit=5",
				"--ratelimit.policies.per-client.window=1m", "--ratelimit.policies.per-client.limt=1");
		assertReported(output, "ratelimit.policies.per-client.limt", "ratelimit.policies.per-client.limit");
		assertThat(output).contains("Origin: \"ratelimit.policies.per-client.limt\" from property source "
				+ "\"commandLineArgs\"");
	}

	@Test
	void aMisspelledSwitchNamesTheSwitch(CapturedOutput output) {
		failToStart("--ratelimit.enbled=false");
		assertReported(output, "ratelimit.enbled", "ratelimit.enabled");
	}

	@Test
	void theSingularOfPoliciesNamesThePlural(CapturedOutput output) {
		failToStart("--ratelimit.policy.per-client.limit=1");
		assertReported(output, "ratelimit.policy.per-client.limit", "ratelimit.policies.per-client.limit");
	}

	@Test
	void aRuleUnderTheSingularOfRulesNamesThePluralAndTheLine(CapturedOutput output) {
		failToStart("--spring.config.location=classpath:mistakes/rule-singular.properties");
		assertReported(output, "ratelimit.filter.rule[0].paths[0]", "ratelimit.filter.rules[0].paths[0]");
		assertReported(output, "ratelimit.filter.rule[0].policies[0]", "ratelimit.filter.rules[0].policies[0]");
		assertThat(output).contains("mistakes/rule-singular.properties").contains(" - 5:");
	}

	@Test
	void aNameCloseToNothingListsTheNamesKnownThere(CapturedOutput output) {
		failToStart("--ratelimit.redis.xyz=1");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: ratelimit.redis.xyz")
			.doesNotContain("Did you mean")
			.contains("Known names after 'ratelimit.redis.': batching, circuit-breaker, denial-cache, max-reconnect-delay, script-mode, timeout.");
	}

	@Test
	void aNameBelowASingleValueSaysSo(CapturedOutput output) {
		failToStart("--ratelimit.enabled.really=true");
		assertThat(output).contains("Property: ratelimit.enabled.really")
			.contains("Remove 'ratelimit.enabled.really': 'ratelimit.enabled' takes a single value.");
	}

	@Test
	void aListWithoutAnIndexSaysHowItsElementsAreNamed(CapturedOutput output) {
		failToStart("--ratelimit.filter.rules.paths=/x");
		assertThat(output).contains("Property: ratelimit.filter.rules.paths")
			.contains("Remove 'ratelimit.filter.rules.paths': 'ratelimit.filter.rules' is a list: its elements are "
					+ "named [0], [1] and so on.");
	}

	@Test
	void aNameInsideAnOverrideIsCheckedToo(CapturedOutput output) {
		failToStart("--ratelimit.policies.api.algorithm=gcra", "--ratelimit.policies.api.limit=5",
				"--ratelimit.policies.api.window=1m", "--ratelimit.policies.api.overrides[Key.1].limmit=50");
		assertReported(output, "ratelimit.policies.api.overrides[Key.1].limmit",
				"ratelimit.policies.api.overrides[Key.1].limit");
	}

	@Test
	void anInvalidValueIsReportedBeforeAnyBeanIsCreated(CapturedOutput output) {
		failToStart("--ratelimit.policies.api.algorithm=gcra", "--ratelimit.policies.api.limit=0",
				"--ratelimit.policies.api.window=1s", "--spring.main.lazy-initialization=false");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid value '0' for configuration property 'ratelimit.policies.api.limit'")
			.contains("Action:")
			.doesNotContain("Error creating bean");
		assertNoStackTrace(output);
	}

	@Test
	void invalidRulesAndRedisSettingsAreReportedWithoutAWebServer(CapturedOutput output) {
		failToStart("--ratelimit.policies.api.algorithm=gcra", "--ratelimit.policies.api.limit=1",
				"--ratelimit.policies.api.window=1s", "--ratelimit.filter.rules[0].paths=/x",
				"--ratelimit.filter.rules[0].policies=apii");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("'ratelimit.filter.rules[0].policies'")
			.contains("unknown policy 'apii'");
		failToStart("--ratelimit.redis.timeout=0s");
		assertThat(output).contains("'ratelimit.redis.timeout'").contains("must be a positive duration");
		failToStart("--ratelimit.key-prefix=rl {x}");
		assertThat(output).contains("'ratelimit.key-prefix'").contains("without spaces or braces");
		failToStart("--ratelimit.policies.api.algorithm=gcra", "--ratelimit.policies.api.limit=1",
				"--ratelimit.policies.api.window=1s", "--ratelimit.policies.api.key=@nothing");
		assertThat(output).contains("'ratelimit.policies.api.key'").contains("no KeyResolver bean named 'nothing'");
		assertNoStackTrace(output);
	}

	@Test
	void systemPropertiesAndKnownNamesStartAsBefore() {
		// the testkit reads -Dratelimit.redis-server: names from system properties and environment variables are
		// not checked, as with Spring Boot's own ignoreUnknownFields = false
		System.setProperty("ratelimit.redis-server", "/nowhere/redis-server");
		try (ConfigurableApplicationContext context = application().run("--ratelimit.policies.api.algorithm=gcra",
				"--ratelimit.policies.api.limit=1", "--ratelimit.policies.api.window=1s",
				"--ratelimit.policies.api.overrides[Key.1].limit=5", "--ratelimit.filter.rules[0].paths=/x",
				"--ratelimit.filter.rules[0].policies=api")) {
			assertThat(context.getBean(RateLimitPolicyRegistry.class).configured("api").overrides().get("Key.1")
				.limit()).isEqualTo(5);
		}
		finally {
			System.clearProperty("ratelimit.redis-server");
		}
	}

	@Test
	void suggestionsFollowTheTypesOfTheProperties() {
		assertThat(suggestion("ratelimit.filter.rules[2].pahts[0]")).isEqualTo("ratelimit.filter.rules[2].paths[0]");
		assertThat(suggestion("ratelimit.redis.circuit-breaker.enabeld"))
			.isEqualTo("ratelimit.redis.circuit-breaker.enabled");
		assertThat(suggestion("ratelimit.policies.a.tiers.limits.pro.brust")).isEqualTo(
				"ratelimit.policies.a.tiers.limits.pro.burst");
		assertThat(suggestion("ratelimit.policies.a.failuremode")).isEqualTo("ratelimit.policies.a.failure-mode");
		assertThat(suggestion("ratelimit.headers.something-else")).isNull();
	}

	@Test
	void distanceCountsEdits() {
		assertThat(RateLimitConfigurationFailureAnalyzer.distance("enbled", "enabled")).isEqualTo(1);
		assertThat(RateLimitConfigurationFailureAnalyzer.distance("policy", "policies")).isEqualTo(3);
		assertThat(RateLimitConfigurationFailureAnalyzer.distance("", "abc")).isEqualTo(3);
		assertThat(RateLimitConfigurationFailureAnalyzer.distance("same", "same")).isZero();
	}

	private static String suggestion(String name) {
		return RateLimitConfigurationFailureAnalyzer.suggest(ConfigurationPropertyName.of(name)).replacement();
	}

	/**
	 * Asserts that the failure report names an unknown property and the known name it proposes, without a stack
	 * trace.
	 */
	static void assertReported(CapturedOutput output, String property, String suggestion) {
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Unknown rate-limit propert")
			.contains("Property: " + property)
			.contains("Did you mean: " + suggestion)
			.contains("Rename '" + property + "' to '" + suggestion + "'.");
		assertNoStackTrace(output);
	}

	private static void assertNoStackTrace(CapturedOutput output) {
		assertThat(output.getAll().lines().filter((line) -> line.startsWith("\tat "))).isEmpty();
	}

	private static void failToStart(String... args) {
		assertThatException().isThrownBy(() -> application().run(args).close());
	}

	private static SpringApplication application() {
		SpringApplication application = new SpringApplication(MinimalApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		return application;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class MinimalApplication {

	}

}
