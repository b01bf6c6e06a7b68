package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.github.ratelimit.autoconfigure.RateLimitConfigurationFailureAnalyzerTests.MinimalApplication;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.redis.LeaseSettings;
import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.test.context.support.TestPropertySourceUtils;

import static io.github.ratelimit.autoconfigure.RateLimitConfigurationFailureAnalyzerTests.assertReported;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The check of {@code ratelimit.*} binds as Spring Boot binds: a list comes whole from the source of highest
 * precedence that has it (a profile document, the command line, test properties, an imported file, environment
 * variables, system properties), so the elements of the lists it replaces are not unknown names; maps merge. Each
 * case starts the way Spring Boot starts an application, on the documents in {@code overrides/} (the base document
 * {@code rules.yml} has three rules): valid, it starts with the winning source's rules; with a typo inside, it stops
 * with the short report naming the property and the closest known name. The lease and partner settings
 * ({@code leases.yml}, on Redis) bind from every source and in every duration form Spring Boot reads; a value out of
 * range stops the start naming the property and where it came from.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitPropertiesSourcesTests {

	private static final String BASE = "--spring.config.location=classpath:/overrides/";

	private static final String NAME = "--spring.config.name=rules";

	/** The documents of the lease and partner settings, {@code leases.yml} and its profile documents. */
	private static final String LEASES = "--spring.config.name=leases";

	/** No source beyond the documents and the command line. */
	private static final Consumer<ConfigurableEnvironment> NONE = (environment) -> {
	};

	@Test
	void withoutAnOverrideTheBaseListApplies() {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME)) {
			assertThat(paths(context)).containsExactly(List.of("/api/**"), List.of("/login"),
					List.of("/admin/**", "/internal/**"));
		}
	}

	@Test
	void aProfileDocumentReplacesTheListAndMergesTheMap() {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME, "--spring.profiles.active=ops")) {
			assertThat(paths(context)).containsExactly(List.of("/ops/**"), List.of("/api/**"));
			assertThat(properties(context).policies()).containsOnlyKeys("api", "login", "ops");
			assertThat(properties(context).policies().get("api").limit()).isEqualTo(50);
			assertThat(properties(context).policies().get("api").algorithm()).isEqualTo(Algorithm.GCRA);
		}
	}

	@Test
	void aProfileDocumentEmptyingTheListStarts() {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME, "--spring.profiles.active=empty")) {
			assertThat(paths(context)).isEmpty();
		}
	}

	@Test
	void aProfileDocumentOfCommaSeparatedValuesReplacesTheList() {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME, "--spring.profiles.active=comma")) {
			assertThat(paths(context)).containsExactly(List.of("/x/**", "/y/**"));
			assertThat(properties(context).filter().rules().get(0).policies()).containsExactly("api",
					"login");
		}
	}

	@Test
	void aTypoInTheProfilesListOrMapIsReported(CapturedOutput output) {
		failToStart(NONE, BASE, NAME, "--spring.profiles.active=typo");
		assertReported(output, "ratelimit.filter.rules[1].pahts[0]", "ratelimit.filter.rules[1].paths[0]");
		assertReported(output, "ratelimit.policies.api.limt", "ratelimit.policies.api.limit");
		assertThat(output).contains("overrides/rules-typo.yml");
	}

	@Test
	void aTypoInAReplacedListIsReportedToo(CapturedOutput output) {
		// 'ops' replaces the list of 'sloppy': its elements are never bound, but a misspelt name is a mistake
		failToStart(NONE, BASE, NAME, "--spring.profiles.active=sloppy,ops");
		assertReported(output, "ratelimit.filter.rules[2].polices[0]", "ratelimit.filter.rules[2].policies[0]");
	}

	@Test
	void theCommandLineReplacesTheList(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME,
				"--ratelimit.filter.rules[0].paths[0]=/cli", "--ratelimit.filter.rules[0].policies[0]=api")) {
			assertThat(paths(context)).containsExactly(List.of("/cli"));
		}
		failToStart(NONE, BASE, NAME, "--ratelimit.filter.rules[0].paths[0]=/cli",
				"--ratelimit.filter.rules[0].policies[0]=api", "--ratelimit.filter.rules[0].methds[0]=GET");
		assertReported(output, "ratelimit.filter.rules[0].methds[0]", "ratelimit.filter.rules[0].methods[0]");
	}

	@Test
	void aCommaSeparatedValueOnTheCommandLineReplacesTheList() {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME,
				"--ratelimit.filter.rules[0].paths=/a,/b", "--ratelimit.filter.rules[0].policies=api")) {
			assertThat(paths(context)).containsExactly(List.of("/a", "/b"));
		}
	}

	@Test
	void testPropertiesReplaceTheList(CapturedOutput output) {
		Consumer<ConfigurableEnvironment> valid = testProperties("ratelimit.filter.rules[0].paths[0]=/test",
				"ratelimit.filter.rules[0].policies[0]=login");
		try (ConfigurableApplicationContext context = run(valid, BASE, NAME, "--spring.profiles.active=ops")) {
			assertThat(paths(context)).containsExactly(List.of("/test"));
		}
		failToStart(testProperties("ratelimit.filter.rules[0].paths[0]=/test",
				"ratelimit.filter.rules[0].policy[0]=login"), BASE, NAME);
		assertReported(output, "ratelimit.filter.rules[0].policy[0]", "ratelimit.filter.rules[0].policies[0]");
	}

	@Test
	void anImportedFileReplacesTheList(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME,
				"--spring.config.import=classpath:/overrides/imported-rules.yml")) {
			assertThat(paths(context)).containsExactly(List.of("/imported/**"), List.of("/api/**"));
		}
		failToStart(NONE, BASE, NAME, "--spring.config.import=classpath:/overrides/imported-typo.yml");
		assertReported(output, "ratelimit.filter.rules[1].metods[0]", "ratelimit.filter.rules[1].methods[0]");
		assertThat(output).contains("overrides/imported-typo.yml");
	}

	@Test
	void environmentVariablesReplaceTheList(CapturedOutput output) {
		// names from environment variables are not checked (RATELIMIT_FILTR_ORDER, as with Spring Boot's
		// ignoreUnknownFields = false); those of the documents under them are
		Consumer<ConfigurableEnvironment> variables = environmentVariables(Map.of("RATELIMIT_FILTER_RULES_0_PATHS_0",
				"/env", "RATELIMIT_FILTER_RULES_0_POLICIES_0", "api", "RATELIMIT_FILTR_ORDER", "5"));
		try (ConfigurableApplicationContext context = run(variables, BASE, NAME)) {
			assertThat(paths(context)).containsExactly(List.of("/env"));
		}
		failToStart(variables, BASE, NAME, "--spring.profiles.active=typo");
		assertReported(output, "ratelimit.filter.rules[1].pahts[0]", "ratelimit.filter.rules[1].paths[0]");
	}

	@Test
	void systemPropertiesReplaceTheList() {
		Consumer<ConfigurableEnvironment> properties = systemProperties(
				Map.of("ratelimit.filter.rules[0].paths[0]", "/sys", "ratelimit.filter.rules[0].policies[0]", "api"));
		try (ConfigurableApplicationContext context = run(properties, BASE, NAME, "--spring.profiles.active=ops")) {
			assertThat(paths(context)).containsExactly(List.of("/sys"));
		}
	}

	@Test
	void springBootsOwnUnknownNameCheckRefusesAReplacedListOfLists() {
		// why RateLimitProperties is no longer ignoreUnknownFields = false: Spring Boot's NoUnboundElementsBindHandler
		// takes rules[2].paths[0] of the replaced base list for an unknown name
		try (ConfigurableApplicationContext context = run(NONE, BASE, NAME, "--spring.profiles.active=ops")) {
			BindHandler handler = new NoUnboundElementsBindHandler(BindHandler.DEFAULT,
					new UnboundElementsSourceFilter());
			assertThatExceptionOfType(BindException.class)
				.isThrownBy(() -> Binder.get(context.getEnvironment())
					.bind("ratelimit", Bindable.of(RateLimitProperties.class), handler))
				.havingCause()
				.isInstanceOfSatisfying(UnboundConfigurationPropertiesException.class,
						(unbound) -> assertThat(unbound.getUnboundProperties())
							.anySatisfy((property) -> assertThat(property.getName())
								.hasToString("ratelimit.filter.rules[2].paths[0]")));
		}
	}

	@Test
	void leasesAndPartnersTakeADurationInEveryFormSpringBootReads() {
		try (ConfigurableApplicationContext context = runOnRedis(NONE, BASE, LEASES)) {
			assertThat(leases(context)).containsOnlyKeys("api");
			assertThat(leases(context).get("api"))
				.isEqualTo(new LeaseSettings(5, Duration.ofSeconds(2), Duration.ofMillis(500)));
			ClientProperties.Partner payments = partner(context, "payments");
			assertThat(payments.maxWait()).isEqualTo(Duration.ofSeconds(2));
			assertThat(payments.maxBelieved()).isEqualTo(Duration.ofMinutes(5));
		}
	}

	@Test
	void aProfileDocumentChangesALeaseSettingAndAddsALeaseAndAPartner() {
		try (ConfigurableApplicationContext context = runOnRedis(NONE, BASE, LEASES, "--spring.profiles.active=eu")) {
			assertThat(leases(context)).containsOnlyKeys("api", "eu");
			assertThat(leases(context).get("api"))
				.isEqualTo(new LeaseSettings(5, Duration.ofSeconds(3), Duration.ofMillis(500)));
			assertThat(leases(context).get("eu"))
				.isEqualTo(new LeaseSettings(0, Duration.ofSeconds(4), Duration.ofSeconds(1)));
			assertThat(properties(context).client().partners()).containsOnlyKeys("payments", "payments-eu",
					"payments.eu");
			assertThat(partner(context, "payments.eu").maxWait()).isEqualTo(Duration.ofSeconds(5));
			assertThat(partner(context, "payments.eu").paceBelow()).isEqualTo(1);
			assertThat(partner(context, "payments").maxWait()).isEqualTo(Duration.ofSeconds(2));
		}
	}

	@Test
	void environmentVariablesSetLeasesAndPartners() {
		// dots become underscores and dashes go; a map key (policy or partner name) comes lowercased
		Consumer<ConfigurableEnvironment> variables = environmentVariables(Map.of(
				"RATELIMIT_POLICIES_LOGIN_LEASE_ENABLED", "true", "RATELIMIT_POLICIES_API_LEASE_LAPSEAFTER", "PT7S",
				"RATELIMIT_POLICIES_API_LEASE_MAXSLICE", "7", "RATELIMIT_CLIENT_PARTNERS_PAYMENTS_MAXWAIT", "3000",
				"RATELIMIT_CLIENT_PARTNERS_BILLING_MAXRETRIES", "0",
				"RATELIMIT_CLIENT_PARTNERS_PAYMENTS_MAX_RETRIES", "9"));
		try (ConfigurableApplicationContext context = runOnRedis(variables, BASE, LEASES)) {
			assertThat(leases(context)).containsOnlyKeys("api", "login");
			assertThat(leases(context).get("api"))
				.isEqualTo(new LeaseSettings(7, Duration.ofSeconds(7), Duration.ofMillis(500)));
			assertThat(properties(context).client().partners()).containsOnlyKeys("payments", "payments-eu",
					"billing");
			assertThat(partner(context, "payments").maxWait()).isEqualTo(Duration.ofSeconds(3));
			assertThat(partner(context, "billing").maxRetries()).isZero();
			// Spring Boot also takes a name's dashes as underscores, for a name it looks up
			assertThat(partner(context, "payments").maxRetries()).isEqualTo(9);
		}
	}

	@Test
	void anEnvironmentVariableReachesADashedNameWithoutItsDashesAndAddsThatName() {
		// Spring Boot reads PAYMENTSEU for the partner 'payments-eu', and also adds the name it spells, 'paymentseu'
		Consumer<ConfigurableEnvironment> variables = environmentVariables(
				Map.of("RATELIMIT_CLIENT_PARTNERS_PAYMENTSEU_MAXWAIT", "4s", "RATELIMIT_POLICIES_MYAPI_LIMIT", "7"));
		try (ConfigurableApplicationContext context = runOnRedis(variables, BASE, LEASES)) {
			assertThat(properties(context).client().partners()).containsOnlyKeys("payments", "payments-eu",
					"paymentseu");
			assertThat(partner(context, "payments-eu").maxWait()).isEqualTo(Duration.ofSeconds(4));
			// and the copy takes the dashed name's other properties too: a second, identical policy
			Map<String, PolicyProperties> policies = properties(context).policies();
			assertThat(policies.get("my-api").limit()).isEqualTo(7);
			assertThat(policies.get("myapi")).isEqualTo(policies.get("my-api"));
		}
	}

	@Test
	void anImportedFileSetsLeasesAndPartners() {
		try (ConfigurableApplicationContext context = runOnRedis(NONE, BASE, LEASES,
				"--spring.config.import=classpath:/overrides/imported-leases.yml")) {
			assertThat(leases(context)).containsOnlyKeys("api", "login");
			assertThat(leases(context).get("login").lapseAfter()).isEqualTo(Duration.ofMillis(1500));
			assertThat(partner(context, "payments").maxWait()).isZero();
		}
	}

	@Test
	void anInvalidLeaseOrPartnerValueStopsTheStartNamingThePropertyAndWhereItCameFrom(CapturedOutput output) {
		failToStartOnRedis(NONE, BASE, LEASES, "--spring.profiles.active=short");
		assertInvalid(output, "ratelimit.policies.api.lease.lapse-after", "overrides/leases.yml");
		failToStartOnRedis(environmentVariables(Map.of("RATELIMIT_POLICIES_API_LEASE_LAPSEAFTER", "149",
				"RATELIMIT_POLICIES_API_LEASE_IDLEAFTER", "100")), BASE, LEASES);
		assertInvalid(output, "ratelimit.policies.api.lease.lapse-after", "RATELIMIT_POLICIES_API_LEASE_LAPSEAFTER");
		failToStartOnRedis(environmentVariables(Map.of("RATELIMIT_CLIENT_PARTNERS_PAYMENTS_PACEBELOW", "2")), BASE,
				LEASES);
		assertInvalid(output, "ratelimit.client.partners.payments.pace-below",
				"RATELIMIT_CLIENT_PARTNERS_PAYMENTS_PACEBELOW");
		failToStartOnRedis(environmentVariables(Map.of("RATELIMIT_CLIENT_PARTNERS_PAYMENTS_MAXWAIT", "soon")), BASE,
				LEASES);
		assertInvalid(output, "ratelimit.client.partners.payments.max-wait",
				"RATELIMIT_CLIENT_PARTNERS_PAYMENTS_MAXWAIT");
	}

	private static Consumer<ConfigurableEnvironment> testProperties(String... properties) {
		// as @SpringBootTest(properties = ...) and @TestPropertySource add them, above every other source
		return (environment) -> TestPropertySourceUtils.addInlinedPropertiesToEnvironment(environment, properties);
	}

	private static Consumer<ConfigurableEnvironment> environmentVariables(Map<String, Object> variables) {
		return (environment) -> environment.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
					StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
	}

	private static Consumer<ConfigurableEnvironment> systemProperties(Map<String, Object> properties) {
		return (environment) -> environment.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
					new MapPropertySource(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, properties));
	}

	private static List<List<String>> paths(ConfigurableApplicationContext context) {
		List<List<String>> paths = new ArrayList<>();
		for (RateLimitProperties.Rule rule : properties(context).filter().rules()) {
			paths.add(rule.paths());
		}
		return paths;
	}

	/** The leases the application decides with: its leasing backend's. */
	private static Map<String, LeaseSettings> leases(ConfigurableApplicationContext context) {
		return context.getBean(LeasingBackend.class).leases();
	}

	private static ClientProperties.Partner partner(ConfigurableApplicationContext context, String name) {
		return properties(context).client().partners().get(name);
	}

	/** The startup report names the property, and where its value came from. */
	private static void assertInvalid(CapturedOutput output, String property, String origin) {
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("'" + property + "'")
			.contains(origin);
	}

	private static RateLimitProperties properties(ConfigurableApplicationContext context) {
		return context.getBean(RateLimitProperties.class);
	}

	private static void failToStartOnRedis(Consumer<ConfigurableEnvironment> sources, String... args) {
		assertThatException().isThrownBy(() -> runOnRedis(sources, args).close());
	}

	/** Leases take their slices from Redis: the application connects to the shared test server. */
	private static ConfigurableApplicationContext runOnRedis(Consumer<ConfigurableEnvironment> sources,
			String... args) {
		RedisServer redis = RedisServers.standalone();
		List<String> all = new ArrayList<>(List.of(args));
		all.add("--spring.data.redis.host=" + redis.host());
		all.add("--spring.data.redis.port=" + redis.port());
		return run(RedisApplication.class, sources, all.toArray(String[]::new));
	}

	private static void failToStart(Consumer<ConfigurableEnvironment> sources, String... args) {
		assertThatException().isThrownBy(() -> run(sources, args).close());
	}

	private static ConfigurableApplicationContext run(Consumer<ConfigurableEnvironment> sources, String... args) {
		return run(MinimalApplication.class, sources, args);
	}

	private static ConfigurableApplicationContext run(Class<?> applicationClass,
			Consumer<ConfigurableEnvironment> sources, String... args) {
		StandardEnvironment environment = new StandardEnvironment();
		sources.accept(environment);
		SpringApplication application = new SpringApplication(applicationClass);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setEnvironment(environment);
		return application.run(args);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class })
	static class RedisApplication {

	}

}
