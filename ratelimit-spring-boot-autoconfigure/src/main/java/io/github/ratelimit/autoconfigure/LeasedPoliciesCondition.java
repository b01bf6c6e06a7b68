package io.github.ratelimit.autoconfigure;

import java.util.Map;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when a policy is leased ({@code ratelimit.policies.<name>.lease.enabled=true}). Reads that flag only:
 * conditions run before {@link RateLimitPropertiesCheck}, which reports every invalid value, so a value that does not
 * bind here reads as no lease.
 */
class LeasedPoliciesCondition implements Condition {

	@Override
	public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
		try {
			return Binder.get(context.getEnvironment())
				.bind("ratelimit.policies", Bindable.mapOf(String.class, LeaseFlag.class))
				.orElse(Map.of())
				.values()
				.stream()
				.anyMatch((policy) -> policy.lease().enabled());
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/** A policy's lease flag, nothing else. */
	record LeaseFlag(@DefaultValue Enabled lease) {
	}

	record Enabled(boolean enabled) {
	}

}
