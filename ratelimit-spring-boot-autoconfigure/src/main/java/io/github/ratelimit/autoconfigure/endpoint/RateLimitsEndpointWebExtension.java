package io.github.ratelimit.autoconfigure.endpoint;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint over HTTP: each write operation of {@link RateLimitsEndpoint}, refused with a 400
 * whose body has the reason (Spring Boot's error responses leave messages out by default).
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

	private final RateLimitsEndpoint endpoint;

	public RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> overridePolicy(@Selector String policy, @Nullable Long limit,
			@Nullable String window, @Nullable Long burst, @Nullable String minInterval, @Nullable Boolean enabled,
			SecurityContext security) {
		return answer(
				() -> this.endpoint.overridePolicy(policy, limit, window, burst, minInterval, enabled, security));
	}

	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> overrideKey(@Selector String policy, @Selector String key,
			@Nullable Long limit, @Nullable String window, @Nullable Long burst, @Nullable String minInterval,
			@Nullable String source, SecurityContext security) {
		return answer(
				() -> this.endpoint.overrideKey(policy, key, limit, window, burst, minInterval, source, security));
	}

	@DeleteOperation
	public WebEndpointResponse<Map<String, Object>> reset(@Selector String policy, @Selector String key,
			@Nullable Boolean override, @Nullable String source, SecurityContext security) {
		return answer(() -> this.endpoint.reset(policy, key, override, source, security));
	}

	@DeleteOperation
	public WebEndpointResponse<Map<String, Object>> removeOverride(@Selector String policy,
			SecurityContext security) {
		return answer(() -> this.endpoint.removeOverride(policy, security));
	}

	private static WebEndpointResponse<Map<String, Object>> answer(Supplier<Map<String, Object>> operation) {
		try {
			return new WebEndpointResponse<>(operation.get(), WebEndpointResponse.STATUS_OK);
		}
		catch (InvalidEndpointRequestException ex) {
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("status", WebEndpointResponse.STATUS_BAD_REQUEST);
			body.put("error", ex.getReason());
			return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
		}
	}

}
