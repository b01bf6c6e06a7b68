package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.redis.LeasingBackend;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Says at startup when {@code ratelimit.policies.<name>.lease.enabled} does nothing: the application's own
 * {@link RateLimiter} or backend bean decides without leases (a warning: the user chose that bean).
 */
final class LeasesInUse implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(LeasesInUse.class);

	private final List<String> leased;

	private final ObjectProvider<RateLimiter> limiter;

	LeasesInUse(RateLimitProperties properties, ObjectProvider<RateLimiter> limiter) {
		this.leased = leasedProperties(properties);
		this.limiter = limiter;
	}

	/** The {@code lease.enabled} properties set to true. */
	static List<String> leasedProperties(RateLimitProperties properties) {
		return properties.policies()
			.entrySet()
			.stream()
			.filter((policy) -> policy.getValue().lease().enabled())
			.map((policy) -> "ratelimit.policies." + policy.getKey() + ".lease.enabled")
			.toList();
	}

	/** Refuses leases over the in-memory backend: there is no Redis to take slices from. */
	static void refuseWithoutRedis(RateLimitProperties properties) {
		List<String> leased = leasedProperties(properties);
		if (!leased.isEmpty()) {
			throw new InvalidConfigurationPropertyValueException(leased.get(0), true,
					"leases take slices of the quota from Redis, and no Redis connection is configured");
		}
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.leased.isEmpty()) {
			return;
		}
		RateLimiter limiter = this.limiter.getIfUnique();
		if (!(limiter instanceof DefaultRateLimiter ours && ours.backend() instanceof LeasingBackend)) {
			logger.warn(String.join(", ", this.leased) + " set, but the application's own RateLimiter or "
					+ "RateLimitBackend bean is in place of the starter's: leases apply only if that limiter decides "
					+ "with the 'rateLimitLeasingBackend' bean");
		}
	}

}
