package io.github.ratelimit.autoconfigure.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.autoconfigure.endpoint.RateLimitsEndpointAutoConfiguration;
import io.github.ratelimit.spring.client.PartnerQuota;
import io.github.ratelimit.spring.client.PartnerResponse;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.spring.client.RateLimitedClients;
import io.github.ratelimit.spring.client.SharedPartnerState;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static io.github.ratelimit.autoconfigure.InvalidProperties.assertInvalidProperty;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The partners as the starter wires them: a bean the application applies, state in Redis when there is Redis, the
 * partners' quotas in the endpoint, and {@code ratelimit.client.*} validated naming the property.
 */
class RateLimitClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitClientAutoConfiguration.class, RateLimitsEndpointAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=ratelimits", "ratelimit.redis.timeout=1s");

	@Test
	void partnersAreABeanWhoseStateIsSharedThroughRedisAndShownByTheEndpoint() {
		RedisServer redis = RedisServers.standalone();
		redis.flushAll();
		this.runner
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.client.partners.payments.max-wait=5s", "ratelimit.client.partners.local-only.shared=false")
			.run((context) -> {
				RateLimitedClients clients = context.getBean(RateLimitedClients.class);
				assertThat(clients.restClient("payments")).isNotNull();
				assertThatIllegalArgumentException().isThrownBy(() -> clients.partner("unknown"))
					.withMessageContaining("ratelimit.client.partners.unknown");
				// another instance learned it: the bean reads it from Redis
				new SharedPartnerState(context.getBean(RedisConnectionFactory.class), RateLimitKeys.DEFAULT_PREFIX,
						Duration.ofSeconds(1))
					.learn("payments", new PartnerResponse(200, List.of(new PartnerQuota("p", "", 7, 60, 10L, 60L)),
							null))
					.block();
				Map<String, Object> partners = context.getBean(RateLimitsEndpoint.class).fleetTop("partners");
				assertThat(partners).containsOnlyKeys("local-only", "payments");
				assertThat(partners.get("payments").toString()).contains("remaining=7", "limit=10");
				assertThat(partners.get("local-only").toString()).contains("quotas={}");
			});
	}

	@Test
	void withoutPartnersTheBeanIsEmpty() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitedClients.class).known()).isEmpty());
	}

	@Test
	void withRateLimitingOffTheBeanStillExistsAndPassesCalls() {
		this.runner.withPropertyValues("ratelimit.enabled=false", "ratelimit.client.partners.payments.max-wait=5s")
			.run((context) -> {
				RateLimitedClients clients = context.getBean(RateLimitedClients.class);
				assertThat(clients.restClient("payments")).isNotNull();
				assertThat(clients.partner("anything").name()).isEqualTo("anything");
			});
	}

	@Test
	void aPartnerNameWithDotsIsBoundInTheBracketFormOnly() {
		this.runner.withPropertyValues("ratelimit.client.partners[api.example.com].max-wait=5s")
			.run((context) -> assertThat(context.getBean(RateLimitedClients.class).known())
				.containsOnlyKeys("api.example.com"));
		// without brackets the dots split the name: partner "api" gets an unknown property, refused by name
		this.runner.withPropertyValues("ratelimit.client.partners.api.example.com.max-wait=5s")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("ratelimit.client.partners.api.example.com.max-wait"));
	}

	@Test
	void invalidValuesFailTheStartNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.client.partners.pay.max-believed=0s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.client.partners.pay.max-believed", "at least 1s"));
		this.runner.withPropertyValues("ratelimit.client.partners.pay.pace-below=1.5")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.client.partners.pay.pace-below", "at most 1"));
		this.runner.withPropertyValues("ratelimit.client.partners.pay.max-wait=-1s")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.client.partners.pay.max-wait", "negative"));
		this.runner.withPropertyValues("ratelimit.client.partners.pay.max-retries=-1")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(),
					"ratelimit.client.partners.pay.max-retries", "0 or more"));
		this.runner.withPropertyValues("ratelimit.client.partners.pay.max-wiat=1s")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(UnboundConfigurationPropertiesException.class)
				.hasMessageContaining("ratelimit.client.partners.pay.max-wiat"));
		this.runner.withPropertyValues("ratelimit.client.partners[a b].max-retries=1")
			.run((context) -> assertInvalidProperty(context.getStartupFailure(), "ratelimit.client.partners",
					"letters"));
	}

}
