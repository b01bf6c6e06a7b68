package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.RequestContext;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * The tier of an API key, looked up on the server (here a fixed table; in an application, the customer's
 * subscription): {@code tiers.key: "@apiKeyTier"} in {@code application.yml}. A tier never comes from a value the
 * client sets: the client only says which key it has.
 */
@Component("apiKeyTier")
public class ApiKeyTiers implements KeyResolver {

	private static final Map<String, String> TIERS = Map.of("pro-key-1", "pro", "pro-key-2", "pro");

	@Override
	public @Nullable String resolve(RequestContext request) {
		String key = request.header("X-Api-Key");
		return (key != null) ? TIERS.get(key) : null;
	}

}
