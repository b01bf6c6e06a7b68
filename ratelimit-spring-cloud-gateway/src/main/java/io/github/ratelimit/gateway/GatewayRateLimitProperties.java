package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Properties of the Spring Cloud Gateway integration.
 */
@ConfigurationProperties("ratelimit.gateway")
public class GatewayRateLimitProperties {

	/**
	 * Policies (names under ratelimit.policies) checked for the routes whose RequestRateLimiter filter names none
	 * in its ratelimit.policies argument.
	 */
	private List<String> defaultPolicies = new ArrayList<>();

	public List<String> getDefaultPolicies() {
		return this.defaultPolicies;
	}

	public void setDefaultPolicies(List<String> defaultPolicies) {
		this.defaultPolicies = defaultPolicies;
	}

}
