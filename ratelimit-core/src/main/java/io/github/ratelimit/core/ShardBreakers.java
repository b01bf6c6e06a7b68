package io.github.ratelimit.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The circuit breakers of a guarded limiter, in a registry of their own for metrics: the configured one for the
 * backend as a whole, and on Redis Cluster one per master ({@code ratelimit-redis@10.0.0.7:6379}), made when first
 * seen; those of shards gone are dropped then (architecture.md, "A breaker per master").
 */
final class ShardBreakers {

	/** The limiter's category: what the guard logs is configured with the limiter. */
	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	private final RateLimitBackend backend;

	private final CircuitBreaker configured;

	private final CircuitBreakerRegistry registry;

	private final ShardBreaker whole;

	private final ConcurrentHashMap<String, ShardBreaker> byShard = new ConcurrentHashMap<>();

	/** Whether the whole backend's breaker is in the registry: until the backend names shards. */
	private volatile boolean wholeListed;

	ShardBreakers(RateLimitBackend backend, CircuitBreaker configured) {
		this.backend = backend;
		this.configured = configured;
		this.registry = CircuitBreakerRegistry.of(configured.getCircuitBreakerConfig());
		this.whole = new ShardBreaker(configured);
		logTransitions(configured);
		listWhole();
	}

	CircuitBreaker configured() {
		return this.configured;
	}

	CircuitBreakerRegistry registry() {
		return this.registry;
	}

	/** The breaker of a shard (null: the whole backend), made the first time the shard is seen. */
	ShardBreaker of(@Nullable String shard) {
		if (shard == null) {
			if (!this.wholeListed) {
				listWhole();
			}
			return this.whole;
		}
		ShardBreaker found = this.byShard.get(shard);
		return (found != null) ? found : add(shard);
	}

	/** Whether any shard's circuit is open or probing. */
	boolean degraded() {
		if (this.wholeListed && this.whole.degraded()) {
			return true;
		}
		for (ShardBreaker shard : this.byShard.values()) {
			if (shard.degraded()) {
				return true;
			}
		}
		return false;
	}

	private synchronized void listWhole() {
		if (!this.wholeListed) {
			// the registry's API makes entries: make one by the breaker's name and replace it by the breaker itself
			this.registry.circuitBreaker(this.configured.getName());
			this.registry.replace(this.configured.getName(), this.configured);
			this.wholeListed = true;
		}
	}

	private synchronized ShardBreaker add(String shard) {
		ShardBreaker found = this.byShard.get(shard);
		if (found != null) {
			return found;
		}
		CircuitBreaker breaker = this.registry.circuitBreaker(name(shard), this.configured.getCircuitBreakerConfig());
		logTransitions(breaker);
		ShardBreaker added = new ShardBreaker(breaker);
		this.byShard.put(shard, added);
		forgetGone(shard);
		return added;
	}

	/**
	 * Drops the breakers of shards the backend no longer sends entries to (a failed-over master), and the whole
	 * backend's once it names shards. A backend that names none keeps them all.
	 */
	private void forgetGone(String added) {
		Set<String> current = this.backend.shards();
		if (current.isEmpty()) {
			return;
		}
		for (String shard : this.byShard.keySet()) {
			if (!shard.equals(added) && !current.contains(shard)) {
				this.byShard.remove(shard);
				this.registry.remove(name(shard));
			}
		}
		if (this.wholeListed) {
			this.registry.remove(this.configured.getName());
			this.wholeListed = false;
		}
	}

	private String name(String shard) {
		return this.configured.getName() + "@" + shard;
	}

	private static void logTransitions(CircuitBreaker breaker) {
		breaker.getEventPublisher().onStateTransition((event) -> {
			CircuitBreaker.State to = event.getStateTransition().getToState();
			if (to == CircuitBreaker.State.OPEN) {
				logger.warn("Rate-limit backend failing: circuit breaker '" + event.getCircuitBreakerName()
						+ "' open, its decisions follow each policy's failure-mode until it answers again");
			}
			else if (to == CircuitBreaker.State.CLOSED) {
				logger.info("Rate-limit backend answering again: circuit breaker '" + event.getCircuitBreakerName()
						+ "' closed, limits enforced");
			}
		});
	}

}
