package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The {@link RateLimiter} over one {@link RateLimitBackend}: evaluates a request's entries together and hands out the
 * concurrency permits of an admitted request. Between it and the backend sit layers composed by the {@link Builder}
 * (architecture.md, "The composition").
 * <p>
 * Built with {@link #builder(RateLimitBackend)}, the limiter is <em>guarded</em>: a backend that fails, or does not
 * answer within the time budget, or whose circuit breaker is open, never fails the caller. Each policy's
 * {@link FailureMode} decides instead: {@link FailureMode#OPEN open} admits unchecked, {@link FailureMode#CLOSED
 * closed} refuses, {@link FailureMode#LOCAL local} decides in this instance's memory with the same algorithm. No
 * decision waits longer than the budget ({@link #check} waits on {@link #checkAsync}); what an answer that arrives
 * after the budget took stays counted for a request the failure modes admitted and is given back for one they
 * refused. Releasing a permit waits at most the budget too, and not at all while the circuit is open: a release the
 * backend does not confirm is still sent, and a concurrency permit that never reaches the backend is reclaimed after
 * its policy's window. On Redis Cluster each master has a circuit breaker of its own ({@link RateLimitBackend#shard}):
 * a master that fails keeps only its own keys from Redis, and a request whose entries live on several masters is
 * decided per master and combined (what one part took is given back when another denies).
 * <p>
 * Built with the constructor (or the builder with {@link Builder#guarded(boolean) guarded(false)}), the limiter is
 * <em>unguarded</em>: backend failures reach the caller as exceptions.
 * <p>
 * With a {@link RateLimitDenialCache} ({@link Builder#denialCache(RateLimitDenialCache)}), guarded or not, a request
 * whose denial the backend made earlier and that still holds is denied from the cache, without a backend call.
 * <p>
 * Each decision is observed as {@value DefaultRateLimitObservationConvention#NAME} in the
 * {@link ObservationRegistry} given to the builder (none by default, and then no observation context is made at
 * all), with a {@link RateLimitObservationContext} that holds no identity. The limiter also counts, in memory, the
 * {@linkplain #errorCount(BackendErrorKind) backend errors by kind} and the
 * {@linkplain #permitsInFlight(String) concurrency permits in flight per policy}, for meters to read.
 */
public final class DefaultRateLimiter implements RateLimiter {

	private static final Log logger = LogFactory.getLog(DefaultRateLimiter.class);

	/** How many of the latest guarded decisions {@link #degraded()} and health look back on. */
	public static final int RECENT_DECISIONS = Guard.RecentDecisions.SIZE;

	private static final RateLimitDecision EMPTY = new RateLimitDecision(List.of(), Permit.NONE);

	private static final RateLimitObservationConvention DEFAULT_CONVENTION =
			new DefaultRateLimitObservationConvention();

	/** Where Reactor's context holds the current observation (Micrometer's {@code ObservationThreadLocalAccessor}). */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	private final RateLimitBackend backend;

	/** The layers a request goes through to the backend, composed by the {@link Builder}. */
	private final Decider decider;

	private final @Nullable Guard guard;

	private final ObservationRegistry observationRegistry;

	private final @Nullable RateLimitObservationConvention observationConvention;

	private final ErrorCounts errors;

	private final Acquired.PermitsInFlight permitsInFlight;

	private final @Nullable RateLimitDenialCache denialCache;

	/**
	 * An unguarded limiter: backend failures are thrown to the caller.
	 * @param backend the backend
	 */
	public DefaultRateLimiter(RateLimitBackend backend) {
		this(backend, ObservationRegistry.NOOP);
	}

	/**
	 * An unguarded limiter whose decisions are observed.
	 * @param backend the backend
	 * @param observationRegistry where each decision is observed
	 */
	public DefaultRateLimiter(RateLimitBackend backend, ObservationRegistry observationRegistry) {
		this(backend, observationRegistry, null);
	}

	/**
	 * An unguarded limiter whose decisions are observed with a convention of its own.
	 * @param backend the backend
	 * @param observationRegistry where each decision is observed
	 * @param observationConvention the convention, or null for {@link DefaultRateLimitObservationConvention}
	 */
	public DefaultRateLimiter(RateLimitBackend backend, ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention observationConvention) {
		this(builder(backend).guarded(false).observationRegistry(observationRegistry)
			.observationConventionOrNull(observationConvention));
	}

	private DefaultRateLimiter(Builder builder) {
		this.backend = builder.backend;
		this.observationRegistry = builder.observationRegistry;
		this.observationConvention = builder.observationConvention;
		this.denialCache = builder.denialCache;
		this.errors = new ErrorCounts();
		this.permitsInFlight = new Acquired.PermitsInFlight();
		Builder.Layers layers = builder.compose(this.errors, this.permitsInFlight);
		this.decider = layers.decider();
		this.guard = layers.guard();
		RequestIds.initialize();
	}

	/**
	 * Starts a limiter, guarded unless {@link Builder#guarded(boolean) told otherwise}: failures and slow answers of
	 * the backend are decided by each policy's {@link FailureMode}.
	 * @param backend the backend, typically Redis
	 * @return a builder
	 */
	public static Builder builder(RateLimitBackend backend) {
		return new Builder(backend);
	}

	/**
	 * The circuit breaker given to the builder, when the limiter has one. It guards every call to a backend that is
	 * one server (standalone, Sentinel). On Redis Cluster each master has a breaker of its own, made from this
	 * one's configuration ({@link #circuitBreakers()}); this one then guards only calls whose master is not known
	 * yet (before the first connection).
	 * @return the circuit breaker, or null
	 */
	public @Nullable CircuitBreaker circuitBreaker() {
		return (this.guard != null) ? this.guard.configuredBreaker() : null;
	}

	/**
	 * The circuit breakers in use, for health and metrics to read: the {@linkplain #circuitBreaker() configured one}
	 * on a backend that is one server, and on Redis Cluster one per master, named after the configured one and the
	 * master's address ({@code ratelimit-redis@10.0.0.7:6379}). Breakers are added when a master is first seen and
	 * removed once it no longer serves slots. Read it; adding or removing breakers changes nothing the limiter does.
	 * @return the registry of the breakers, or null without a breaker
	 */
	public @Nullable CircuitBreakerRegistry circuitBreakers() {
		return (this.guard != null) ? this.guard.registry() : null;
	}

	/**
	 * The time budget of a backend call, when the limiter has one.
	 * @return the budget, or null when calls wait for the backend's own timeout
	 */
	public @Nullable Duration timeout() {
		return (this.guard != null) ? this.guard.timeout : null;
	}

	/**
	 * Whether decisions are degraded: a circuit breaker (of any Cluster master) is open or probing, or the failure
	 * modes made at least one of the last {@value #RECENT_DECISIONS} guarded decisions (an error, a timeout, or not
	 * tried because a circuit is open). True from the first failure, and steady while a share of the decisions fail
	 * (one master of a Cluster down). Always false for an unguarded limiter.
	 * @return true while degraded
	 */
	public boolean degraded() {
		return this.guard != null && this.guard.degraded();
	}

	/**
	 * How many of the last {@value #RECENT_DECISIONS} guarded decisions the failure modes made. Always zero for an
	 * unguarded limiter.
	 * @return the count
	 */
	public int recentFailureModeDecisions() {
		return (this.guard != null) ? this.guard.recentFailureModeDecisions() : 0;
	}

	/**
	 * The failure of the backend's last failed call, while {@link #degraded()}.
	 * @return the last failure, or null when not degraded
	 */
	public @Nullable Throwable lastFailure() {
		return (this.guard != null) ? this.guard.lastFailure() : null;
	}

	/**
	 * The cache of the backend's denials this limiter answers from, when it has one.
	 * @return the denial cache, or null
	 */
	public @Nullable RateLimitDenialCache denialCache() {
		return this.denialCache;
	}

	/**
	 * The backend the limiter decides with.
	 * @return the backend
	 */
	public RateLimitBackend backend() {
		return this.backend;
	}

	/**
	 * How often a guarded limiter met a kind of backend trouble since it was built. Always zero when unguarded.
	 * @param kind the kind
	 * @return the count
	 */
	public long errorCount(BackendErrorKind kind) {
		return this.errors.count(kind);
	}

	/**
	 * The concurrency permits this instance holds for a policy: taken by admitted requests and not yet released,
	 * in units of cost. Counted in this instance's memory, for this instance's requests only.
	 * @param policy the policy's name
	 * @return the permits held
	 */
	public long permitsInFlight(String policy) {
		return this.permitsInFlight.get(policy);
	}

	@Override
	public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return Mono.just(EMPTY);
		}
		Mono<RateLimitDecision> decision = decide(request);
		if (this.observationRegistry.isNoop()) {
			return decision;
		}
		return Mono.deferContextual((reactorContext) -> {
			RateLimitObservationContext context = observationContext(request);
			Observation observation = observation(context);
			Object parent = reactorContext.hasKey(OBSERVATION_KEY) ? reactorContext.get(OBSERVATION_KEY) : null;
			if (parent instanceof Observation parentObservation) {
				observation.parentObservation(parentObservation);
			}
			observation.start();
			// stopped before the signal goes on, so that whoever gets the decision finds the observation complete;
			// a cancel after the decision (block() cancels once it has its value) stops nothing twice
			AtomicBoolean stopped = new AtomicBoolean();
			return decision.doOnSuccess((made) -> {
				if (made != null) {
					context.setDecision(made);
				}
				if (stopped.compareAndSet(false, true)) {
					observation.stop();
				}
			}).doOnError((ex) -> {
				if (stopped.compareAndSet(false, true)) {
					observation.error(ex);
					observation.stop();
				}
			}).doOnCancel(() -> {
				if (stopped.compareAndSet(false, true)) {
					observation.stop();
				}
			});
		});
	}

	private RateLimitObservationContext observationContext(RateLimitRequest request) {
		List<RateLimitPolicy> policies = new ArrayList<>(request.entries().size());
		for (RateLimitRequest.Entry entry : request.entries()) {
			policies.add(entry.policy());
		}
		return new RateLimitObservationContext(policies, this.backend.kind());
	}

	private Observation observation(RateLimitObservationContext context) {
		return Observation.createNotStarted(this.observationConvention, DEFAULT_CONVENTION, () -> context,
				this.observationRegistry);
	}

	/**
	 * Decides a request: entries of policies in shadow mode apart from the others when both kinds are present
	 * ({@link ShadowSplit}), each kind through the layers.
	 */
	private Mono<RateLimitDecision> decide(RateLimitRequest request) {
		ShadowSplit split = ShadowSplit.of(request);
		return ((split != null) ? split.decide(this.decider, this.errors) : this.decider.decide(request))
			.map(this::logShadowDenials);
	}

	private RateLimitDecision logShadowDenials(RateLimitDecision decision) {
		if (logger.isDebugEnabled() && decision.shadowDenied()) {
			for (PolicyDecision shadow : decision.shadowDecisions()) {
				if (!shadow.allowed() && shadow.enforcement() != Enforcement.FAILED_CLOSED) {
					logger.debug("Shadow policy '" + shadow.policy().name() + "' would have denied identity '"
							+ shadow.identity() + "' (retry after " + shadow.retryAfter().toMillis() + " ms); admitted");
				}
			}
		}
		return decision;
	}

	/**
	 * Builds a {@link DefaultRateLimiter}: guarded unless {@link #guarded(boolean) guarded(false)} is set.
	 */
	public static final class Builder {

		private final RateLimitBackend backend;

		private boolean guarded = true;

		private @Nullable RateLimitDenialCache denialCache;

		private @Nullable Duration timeout;

		private @Nullable CircuitBreaker circuitBreaker;

		private @Nullable RateLimitBackend fallback;

		private @Nullable Duration closedRetryAfter;

		private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

		private @Nullable RateLimitObservationConvention observationConvention;

		private Builder(RateLimitBackend backend) {
			this.backend = backend;
		}

		/**
		 * The longest a decision waits for the backend; beyond it the failure modes decide. Without one, a call
		 * waits for the backend client's own timeout.
		 * @param timeout the budget, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("Timeout must be positive but was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * A circuit breaker around the backend: while it is open, decisions are made by the failure modes at once,
		 * without trying the backend. On a backend of several shards (Redis Cluster: {@link RateLimitBackend#shard})
		 * each shard gets a breaker of its own with this one's configuration, so that one failing master keeps
		 * only its own entries from the backend.
		 * @param circuitBreaker the breaker
		 * @return this builder
		 */
		public Builder circuitBreaker(CircuitBreaker circuitBreaker) {
			this.circuitBreaker = circuitBreaker;
			return this;
		}

		/**
		 * Where {@link FailureMode#LOCAL} policies are enforced while the backend fails; a
		 * {@link LocalRateLimitBackend} with default bounds unless set.
		 * @param fallback the in-memory backend
		 * @return this builder
		 */
		public Builder fallback(RateLimitBackend fallback) {
			this.fallback = fallback;
			return this;
		}

		/**
		 * The retry-after of a refusal by a {@link FailureMode#CLOSED} policy; by default the circuit breaker's wait
		 * in the open state, or one second without a breaker.
		 * @param retryAfter the retry-after
		 * @return this builder
		 */
		public Builder closedRetryAfter(Duration retryAfter) {
			this.closedRetryAfter = retryAfter;
			return this;
		}

		/**
		 * Where each decision is observed ({@value DefaultRateLimitObservationConvention#NAME}); none by default.
		 * @param observationRegistry the registry
		 * @return this builder
		 */
		public Builder observationRegistry(ObservationRegistry observationRegistry) {
			this.observationRegistry = observationRegistry;
			return this;
		}

		/**
		 * A convention to replace {@link DefaultRateLimitObservationConvention}'s name and key values.
		 * @param observationConvention the convention
		 * @return this builder
		 */
		public Builder observationConvention(RateLimitObservationConvention observationConvention) {
			this.observationConvention = observationConvention;
			return this;
		}

		/**
		 * Whether the limiter is guarded (the default): backend failures and slow answers are decided by each
		 * policy's {@link FailureMode}, within the {@linkplain #timeout(Duration) time budget}. Unguarded, backend
		 * failures reach the caller as exceptions, as with the constructor, and the guard's settings (timeout,
		 * circuit breaker, fallback, closed retry-after) must not be set.
		 * @param guarded false for an unguarded limiter
		 * @return this builder
		 */
		public Builder guarded(boolean guarded) {
			this.guarded = guarded;
			return this;
		}

		/**
		 * A cache of the backend's denials to answer from: an identity denied until a time is denied again until
		 * then without a backend call. Not exact in every case (quota given back on another instance is seen only
		 * when the cached denial ends): see {@link RateLimitDenialCache}. None by default.
		 * @param denialCache the cache, for this limiter only
		 * @return this builder
		 */
		public Builder denialCache(RateLimitDenialCache denialCache) {
			this.denialCache = denialCache;
			return this;
		}

		private Builder observationConventionOrNull(@Nullable RateLimitObservationConvention convention) {
			this.observationConvention = convention;
			return this;
		}

		/**
		 * The layers between the limiter and the backend (architecture.md, "The composition"): the denial cache
		 * answers first, then the guard decides (unguarded: the backend, its failures thrown), and beneath the guard
		 * the denial cache learns from every answer the backend gives, late ones included, and forgets what is given
		 * back.
		 */
		private Layers compose(ErrorCounts errors, Acquired.PermitsInFlight inFlight) {
			RateLimitDenialCache cache = this.denialCache;
			RateLimitBackend backend = (cache != null) ? new DenialCachingBackend(this.backend, cache) : this.backend;
			Guard guard = this.guarded ? new Guard(backend, this.timeout, this.circuitBreaker, errors) : null;
			Decider decider = (guard != null) ? new GuardedBackend(backend, guard, failureModes(inFlight), inFlight)
					: new UnguardedBackend(backend, errors, inFlight);
			return new Layers((cache != null) ? DenialCachingBackend.answeringFirst(cache, decider) : decider, guard);
		}

		private record Layers(Decider decider, @Nullable Guard guard) {
		}

		private FailureModes failureModes(Acquired.PermitsInFlight inFlight) {
			RateLimitBackend fallback = (this.fallback != null) ? this.fallback : new LocalRateLimitBackend();
			return new FailureModes(fallback, (this.closedRetryAfter != null) ? this.closedRetryAfter
					: defaultClosedRetryAfter(), inFlight);
		}

		/** By default the circuit breaker's wait in the open state (at least a second), one second without one. */
		private Duration defaultClosedRetryAfter() {
			if (this.circuitBreaker == null) {
				return Duration.ofSeconds(1);
			}
			long waitMillis = this.circuitBreaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1);
			return Duration.ofMillis(Math.max(1000, waitMillis));
		}

		/**
		 * Builds the limiter: the layers between it and the backend are the denial cache's (when set), then the
		 * guard's (unless unguarded).
		 * @return the limiter, guarded unless {@link #guarded(boolean) guarded(false)}
		 * @throws IllegalStateException when unguarded with a setting of the guard
		 */
		public DefaultRateLimiter build() {
			if (!this.guarded && (this.timeout != null || this.circuitBreaker != null || this.fallback != null
					|| this.closedRetryAfter != null)) {
				throw new IllegalStateException("An unguarded limiter has no timeout, circuit breaker, fallback "
						+ "or closed retry-after; remove them or keep the limiter guarded");
			}
			return new DefaultRateLimiter(this);
		}

	}

}
