package io.github.ratelimit.gateway;

import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.ConfiguredPolicy;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitPolicyRegistry;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.RequestContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.http.HttpHeaders;

/**
 * A Spring Cloud Gateway {@code RateLimiter} whose routes name policies of {@code ratelimit.policies.*}, checked in
 * one call through the starter's enforcer for the identity the filter's key resolver gives:
 *
 * <pre>{@code
 * filters:
 *   - name: RequestRateLimiter
 *     args:
 *       key-resolver: "#{@apiKeyResolver}"
 *       ratelimit.policies: per-second, per-day
 *       ratelimit.cost: 1        # optional: replaces the policies' own cost
 * }</pre>
 *
 * A route that names none gets {@code ratelimit.gateway.default-policies}. Responses carry the starter's headers and
 * rejection (429, or 503 when a {@code closed} policy could not be checked).
 */
public class PolicyRateLimiter extends AbstractRateLimiter<PolicyRateLimiter.Config> {

	/** The prefix of this limiter's arguments in a {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "ratelimit";

	/** The request attribute under which the policies find the key resolver's identity. */
	private static final String IDENTITY_ATTRIBUTE = PolicyRateLimiter.class.getName() + ".identity";

	private static final KeySpec GATEWAY_KEY = KeySpec.parse("@gateway-key-resolver",
			(name) -> (request) -> (String) request.attribute(IDENTITY_ATTRIBUTE));

	private final RateLimitEnforcer enforcer;

	private final RateLimitResponses responses;

	private final RateLimitPolicyRegistry policies;

	private final Config defaults;

	/**
	 * A limiter.
	 * @param enforcer checks the route's policies
	 * @param responses renders the headers and the rejection
	 * @param policies the configured policies
	 * @param configurationService binds the routes' arguments
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
			List<RateLimitEnforcer.Target> targets = new ArrayList<>(config.getPolicies().size());
			for (String name : config.getPolicies()) {
				ConfiguredPolicy policy = this.policies.configured(name);
				targets.add(new RateLimitEnforcer.Target(policy, GATEWAY_KEY, config.getCost()));
			}
			GatewayExchange exchange = context.getOrDefault(GatewayExchange.KEY, null);
			Mono<RequestContext> request = (exchange != null) ? exchange.request() : Mono.empty();
			return request.map((resolved) -> (RequestContext) new KeyedRequest(resolved, id))
				.defaultIfEmpty(new KeyedRequest(null, id))
				.flatMap((keyed) -> check(keyed, targets, exchange, context));
		});
	}

	private Mono<Response> check(RequestContext request, List<RateLimitEnforcer.Target> targets,
			@Nullable GatewayExchange exchange, ContextView context) {
		// the check goes on when the client goes away, so that what it takes is recorded, then released
		CompletableFuture<Response> future = this.enforcer.checkAsync(request, targets, null, null)
			.flatMap((decision) -> respond(decision, request, exchange))
			.contextWrite(context)
			.toFuture();
		return Mono.fromFuture(future, true);
	}

	private Mono<Response> respond(RateLimitDecision decision, RequestContext request,
			@Nullable GatewayExchange exchange) {
		if (decision.allowed()) {
			Response response = new Response(true, singleValued(this.responses.headers(decision)));
			return (exchange != null) ? exchange.admitted(decision).thenReturn(response) : Mono.just(response);
		}
		Rejection rejection = this.responses.reject(decision, request);
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(rejection.headers());
		headers.clearContentHeaders();
		Response response = new Response(false, singleValued(headers));
		return (exchange != null) ? exchange.denied(rejection).thenReturn(response) : Mono.just(response);
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

	/** The exchange's request context, with the key resolver's identity where the policies' key finds it. */
	private record KeyedRequest(@Nullable RequestContext delegate, String identity) implements RequestContext {

		@Override
		public String method() {
			return (this.delegate != null) ? this.delegate.method() : "";
		}

		@Override
		public String path() {
			return (this.delegate != null) ? this.delegate.path() : "";
		}

		@Override
		public String requestPath() {
			return (this.delegate != null) ? this.delegate.requestPath() : "";
		}

		@Override
		public @Nullable String remoteAddress() {
			return (this.delegate != null) ? this.delegate.remoteAddress() : null;
		}

		@Override
		public @Nullable String header(String name) {
			return (this.delegate != null) ? this.delegate.header(name) : null;
		}

		@Override
		public @Nullable Principal principal() {
			return (this.delegate != null) ? this.delegate.principal() : null;
		}

		@Override
		public @Nullable Object attribute(String name) {
			if (IDENTITY_ATTRIBUTE.equals(name)) {
				return this.identity;
			}
			return (this.delegate != null) ? this.delegate.attribute(name) : null;
		}

		@Override
		public Object nativeRequest() {
			return (this.delegate != null) ? this.delegate.nativeRequest() : this;
		}

	}

}
