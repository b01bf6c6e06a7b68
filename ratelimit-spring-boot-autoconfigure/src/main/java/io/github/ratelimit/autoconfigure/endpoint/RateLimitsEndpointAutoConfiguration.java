package io.github.ratelimit.autoconfigure.endpoint;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RedisTopDenials;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.spring.client.RateLimitedClients;
import io.github.ratelimit.spring.TopDenialsSource;

import org.springframework.beans.factory.ObjectProvider;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code ratelimits} Actuator endpoint, when the actuator is on the classpath and the endpoint available. */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean({ RateLimitPolicyRegistry.class, RateLimitBackend.class })
@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
public final class RateLimitsEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitsEndpoint rateLimitsEndpoint(RateLimitPolicyRegistry registry, RateLimitBackend backend,
			RateLimitProperties properties, ObjectProvider<RedisTopDenials> fleet, ObjectProvider<TopDenials> own,
			ObjectProvider<RateLimitedClients> clients) {
		// every instance's top denials through Redis, else this instance's own, else none
		TopDenialsSource top = fleet.getIfAvailable();
		if (top == null) {
			top = own.getIfAvailable();
		}
		RateLimitsEndpoint endpoint = new RateLimitsEndpoint(registry, backend, top, properties.top().digestOnly());
		clients.ifAvailable(endpoint::partners);
		return endpoint;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitsEndpoint.class)
	RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
		return new RateLimitsEndpointWebExtension(endpoint);
	}

}
