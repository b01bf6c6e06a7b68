package io.github.ratelimit.autoconfigure.client;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.autoconfigure.ClientProperties;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.spring.client.LocalPartnerState;
import io.github.ratelimit.spring.client.PartnerCallListener;
import io.github.ratelimit.spring.client.PartnerState;
import io.github.ratelimit.spring.client.RateLimitedClients;
import io.github.ratelimit.spring.client.RateLimitedPartner;
import io.github.ratelimit.spring.client.SharedPartnerState;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The rate-limited partners of {@code ratelimit.client.partners}, as the {@link RateLimitedClients} bean the
 * application applies to the clients it names (nothing is applied to any client by itself). With one Redis
 * connection a partner's state is shared by every instance, each call to Redis within {@code ratelimit.redis.timeout};
 * otherwise kept per instance. With {@code ratelimit.enabled=false} the bean passes every call unchanged.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
public final class RateLimitClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
	RateLimitedClients rateLimitedClients(RateLimitProperties properties,
			ObjectProvider<RedisConnectionFactory> redis, ObjectProvider<PartnerCallListener> listener) {
		Map<String, ClientProperties.Partner> configured = properties.client().partners();
		RedisConnectionFactory factory = configured.isEmpty() ? null : redis.getIfUnique();
		PartnerState shared = (factory != null)
				? new SharedPartnerState(factory, properties.keyPrefix(), properties.redis().timeout()) : null;
		PartnerState local = new LocalPartnerState();
		Map<String, RateLimitedPartner> partners = new LinkedHashMap<>();
		configured.forEach((name, partner) -> partners.put(name,
				new RateLimitedPartner(name, settings(partner), (partner.shared() && shared != null) ? shared : local,
						listener.getIfAvailable(() -> PartnerCallListener.NONE))));
		return new RateLimitedClients(partners);
	}

	/** With rate limiting switched off, the bean still exists (the application starts) and its calls pass. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.enabled", havingValue = false)
	RateLimitedClients rateLimitedClientsPassingThrough() {
		return RateLimitedClients.passThrough();
	}

	private static RateLimitedPartner.Settings settings(ClientProperties.Partner partner) {
		return new RateLimitedPartner.Settings(partner.maxWait(), partner.maxRetries(), partner.retryNonIdempotent(),
				partner.paceBelow(), partner.maxBelieved());
	}

	/** The partners' meters, with Micrometer. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnSingleCandidate(MeterRegistry.class)
	static final class PartnerMetersConfiguration {

		@Bean
		@ConditionalOnMissingBean
		PartnerCallListener rateLimitPartnerMeters(MeterRegistry registry) {
			return new PartnerCallMeters(registry);
		}

	}

}
