package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.RequestContext;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.http.HttpHeaders;

/**
 * A Spring Cloud Gateway {@code RateLimiter} whose routes name policies of {@code ratelimit.policies.*} in their
 * {@code RequestRateLimiter} arguments ({@code ratelimit.policies: per-second, per-day}, optionally
 * {@code ratelimit.cost}), checked in one call through the starter's enforcer for the identity the filter's key
 * resolver gives. A route that names none gets {@code ratelimit.gateway.default-policies}. Responses carry the
 * starter's headers and rejection (429, or 503 when a {@code closed} policy could not be checked).
 */
public class PolicyRateLimiter extends AbstractRateLimiter<PolicyRateLimiter.Config> {

	/** The prefix of this limiter's arguments in a {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "ratelimit";

	/** The key of every policy of a route: the identity the filter's key resolver gave. */
	private static final String GATEWAY_KEY = "@gateway-key-resolver";

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	private final RateLimitPolicyRegistry policies;

	private final Config defaults;

	/**
	 * @param defaultPolicies the policies of routes that name none (may be empty)
	 * @throws IllegalArgumentException when a default policy is unknown
	 */
	public PolicyRateLimiter(RateLimitEnforcer enforcer, RateLimitResponses responses,
			RateLimitPolicyRegistry policies, ConfigurationService configurationService, List<String> defaultPolicies) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
		this.enforcer = enforcer;
		this.responses = responses;
		this.policies = policies;
		this.defaults = new Config().setPolicies(defaultPolicies);
		validate(this.defaults);
	}

	/**
	 * Checks a route's configuration against the configured policies.
	 * @param config the route's configuration
	 * @throws IllegalArgumentException naming the unknown policy or the cost out of range
	 */
	void validate(Config config) {
		for (String name : config.getPolicies()) {
			if (!this.policies.contains(name)) {
				throw new IllegalArgumentException(
						"unknown policy '" + name + "'; configured policies: " + this.policies.names());
			}
			long capacity = this.policies.configured(name).policy().capacity();
			if (config.getCost() < 0 || config.getCost() > capacity) {
				throw new IllegalArgumentException("cost " + config.getCost() + " of policy '" + name
						+ "' must be between 1 and " + capacity + " (or 0 for the policy's own)");
			}
		}
	}

	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		super.onApplicationEvent(event);
		Config config = getConfig().get(event.getRouteId());
		if (config != null) {
			try {
				validate(config);
			}
			catch (IllegalArgumentException ex) {
				getConfig().remove(event.getRouteId());
				throw new IllegalArgumentException("Route '" + event.getRouteId() + "', RequestRateLimiter argument "
						+ CONFIGURATION_PROPERTY_NAME + ": " + ex.getMessage(), ex);
			}
		}
	}

	/** The route's configuration, or the defaults. */
	Config configFor(String routeId) {
		Config config = getConfig().get(routeId);
		return (config != null && !config.getPolicies().isEmpty()) ? config
				: new Config().setPolicies(this.defaults.getPolicies()).setCost((config != null) ? config.getCost() : 0);
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		return Mono.deferContextual((context) -> {
			Config config = configFor(routeId);
			if (config.getPolicies().isEmpty()) {
				return Mono.error(new IllegalStateException("Route '" + routeId + "' names no rate-limit policy: set "
						+ "ratelimit.policies in its RequestRateLimiter arguments, or ratelimit.gateway.default-policies"));
			}
			GatewayExchange exchange = context.getOrDefault(GatewayExchange.KEY, null);
			if (exchange == null) {
				return Mono.error(new IllegalStateException("Route '" + routeId + "': the policy rate limiter runs "
						+ "only in exchanges that passed the starter's RateLimitGatewayFilter"));
			}
			KeySpec key = KeySpec.parse(GATEWAY_KEY, (name) -> (request) -> id);
			List<RateLimitEnforcer.Target> targets = new ArrayList<>(config.getPolicies().size());
			for (String name : config.getPolicies()) {
				targets.add(new RateLimitEnforcer.Target(this.policies.configured(name), key, config.getCost()));
			}
			return exchange.support().request().flatMap((request) -> check(request, targets, exchange, context));
		});
	}

	private Mono<Response> check(RequestContext request, List<RateLimitEnforcer.Target> targets,
			GatewayExchange exchange, ContextView context) {
		// the check goes on when the client goes away, so that what it takes is recorded, then released
		CompletableFuture<Response> future = this.enforcer.checkAsync(request, targets, null, null)
			.flatMap((decision) -> respond(decision, request, exchange))
			.contextWrite(context)
			.toFuture();
		return Mono.fromFuture(future, true);
	}

	private Mono<Response> respond(RateLimitDecision decision, RequestContext request, GatewayExchange exchange) {
		if (decision.allowed()) {
			return exchange.admitted(decision)
				.thenReturn(new Response(true, singleValued(this.responses.headers(decision))));
		}
		Rejection rejection = this.responses.reject(decision, request);
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(rejection.headers());
		headers.clearContentHeaders();
		return exchange.denied(rejection).thenReturn(new Response(false, singleValued(headers)));
	}

	private static Map<String, String> singleValued(HttpHeaders headers) {
		Map<String, String> values = new LinkedHashMap<>();
		headers.forEach((name, list) -> values.put(name, String.join(", ", list)));
		return values;
	}

	/** A route's arguments under {@code ratelimit.}. */
	public static class Config {

		/** The policies checked, together in one call, for every request of the route. */
		private List<String> policies = new ArrayList<>();

		/** The quota one request takes of each policy; 0 keeps each policy's own cost. */
		private long cost;

		public List<String> getPolicies() {
			return this.policies;
		}

		public Config setPolicies(List<String> policies) {
			this.policies = new ArrayList<>(policies.stream().map(String::trim).filter((p) -> !p.isEmpty()).toList());
			return this;
		}

		public long getCost() {
			return this.cost;
		}

		public Config setCost(long cost) {
			this.cost = cost;
			return this;
		}

		@Override
		public String toString() {
			return "Config[policies=" + this.policies + ", cost=" + this.cost + "]";
		}

	}

}
