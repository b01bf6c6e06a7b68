package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.autoconfigure.RedisBackendProperties;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A guarded limiter on Redis built as the starter builds it with its default properties: the time budget, the
 * Resilience4j circuit breaker, the in-memory fallback, Lettuce's reconnect delay capped, Spring Boot's 60 s command
 * timeout, and the connection opened up front. Records when the breaker changes state and when Lettuce (re)connects.
 */
final class StarterLimiter implements AutoCloseable {

	/** The starter's default properties. */
	static final RateLimitProperties DEFAULTS = new Binder().bindOrCreate("ratelimit", RateLimitProperties.class);

	private final ClientResources resources;

	private final LettuceConnectionFactory factory;

	private final Disposable events;

	private final CircuitBreaker breaker;

	private final DefaultRateLimiter limiter;

	/** Breaker transitions: nanoTime and the ordinal of the state entered. */
	private final List<long[]> transitions = new ArrayList<>();

	/** When Lettuce connected (nanoTime). */
	private final List<Long> activations = new ArrayList<>();

	/**
	 * Connects to Redis and builds the limiter.
	 * @param host Redis' host
	 * @param port Redis' port (or a proxy's)
	 */
	StarterLimiter(String host, int port) {
		RedisBackendProperties redis = DEFAULTS.redis();
		Duration maxDelay = redis.maxReconnectDelay();
		// as the starter's auto-configuration: reconnect attempts at most a second apart
		this.resources = ClientResources.builder()
			.reconnectDelay(() -> Delay.exponential(Duration.ofMillis(1), maxDelay, 2, TimeUnit.MILLISECONDS))
			.build();
		this.events = this.resources.eventBus().get().subscribe((event) -> {
			if (event instanceof ConnectionActivatedEvent) {
				synchronized (this.activations) {
					this.activations.add(System.nanoTime());
				}
			}
		});
		this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofSeconds(60)) // Spring Boot's default
					.clientResources(this.resources)
					.build());
		this.factory.afterPropertiesSet();
		this.factory.start();
		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.factory);
		backend.connect();
		this.breaker = CircuitBreaker.of(RateLimitAutoConfiguration.CIRCUIT_BREAKER_NAME,
				RateLimitAutoConfiguration.circuitBreakerConfig(redis.circuitBreaker()));
		this.breaker.getEventPublisher().onStateTransition((event) -> {
			synchronized (this.transitions) {
				this.transitions.add(new long[] { System.nanoTime(), event.getStateTransition().getToState().ordinal() });
			}
		});
		this.limiter = DefaultRateLimiter.builder(backend)
			.timeout(redis.timeout())
			.circuitBreaker(this.breaker)
			.closedRetryAfter(redis.circuitBreaker().waitDurationInOpenState())
			.fallback(new LocalRateLimitBackend(DEFAULTS.local().maximumKeys(), LocalRateLimitBackend.systemClock()))
			.build();
	}

	DefaultRateLimiter limiter() {
		return this.limiter;
	}

	CircuitBreaker breaker() {
		return this.breaker;
	}

	/**
	 * When the breaker first entered a state within {@code [from, to)}.
	 * @return the nanoTime, or null
	 */
	@Nullable Long firstTransition(CircuitBreaker.State state, long from, long to) {
		synchronized (this.transitions) {
			for (long[] t : this.transitions) {
				if (t[0] - from >= 0 && t[0] - to < 0 && t[1] == state.ordinal()) {
					return t[0];
				}
			}
		}
		return null;
	}

	/** How many times the breaker entered a state within {@code [from, to)}. */
	int transitions(CircuitBreaker.State state, long from, long to) {
		int count = 0;
		synchronized (this.transitions) {
			for (long[] t : this.transitions) {
				if (t[0] - from >= 0 && t[0] - to < 0 && t[1] == state.ordinal()) {
					count++;
				}
			}
		}
		return count;
	}

	/**
	 * When Lettuce first connected at or after {@code from}.
	 * @return the nanoTime, or null
	 */
	@Nullable Long firstConnect(long from) {
		synchronized (this.activations) {
			for (long t : this.activations) {
				if (t - from >= 0) {
					return t;
				}
			}
		}
		return null;
	}

	@Override
	public void close() {
		this.events.dispose();
		this.factory.destroy();
		this.resources.shutdown(0, 1, TimeUnit.SECONDS);
	}

}
