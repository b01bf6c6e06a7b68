package io.github.ratelimit.core;

import java.time.Duration;
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
import reactor.util.context.ContextView;

/**
 * The {@link RateLimiter} over one {@link RateLimitBackend}, through layers the {@link Builder} composes.
 * {@link #builder(RateLimitBackend)} makes a <em>guarded</em> limiter: when the backend fails, is late or its circuit
 * breaker is open, each policy's {@link FailureMode} decides. The constructors make an <em>unguarded</em> one:
 * backend failures reach the caller. Decisions are observed as {@value DefaultRateLimitObservationConvention#NAME}
 * when an {@link ObservationRegistry} is given; backend errors and permits in flight are counted for meters.
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

	/** The layers a request goes through to the backend. */
	private final Decider decider;

	private final @Nullable Guard guard;

	private final ObservationRegistry observationRegistry;

	private final @Nullable RateLimitObservationConvention observationConvention;

	private final ErrorCounts errors;

	private final Acquired.PermitsInFlight permitsInFlight;

	private final @Nullable RateLimitDenialCache denialCache;

	/** An unguarded limiter: backend failures reach the caller. */
	public DefaultRateLimiter(RateLimitBackend backend) {
		this(backend, ObservationRegistry.NOOP);
	}

	/** An unguarded limiter whose decisions are observed. */
	public DefaultRateLimiter(RateLimitBackend backend, ObservationRegistry observationRegistry) {
		this(backend, observationRegistry, null);
	}

	/** An unguarded limiter whose decisions are observed with a convention, null for the default one. */
	public DefaultRateLimiter(RateLimitBackend backend, ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention observationConvention) {
		this(builder(backend).guarded(false).observationRegistry(observationRegistry)
			.observationConvention(observationConvention));
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

	/** {@return a builder of a limiter over the backend, guarded unless {@link Builder#guarded(boolean)} says not} */
	public static Builder builder(RateLimitBackend backend) {
		return new Builder(backend);
	}

	/** {@return the builder's circuit breaker, or null; on Redis Cluster it configures each master's} */
	public @Nullable CircuitBreaker circuitBreaker() {
		return (this.guard != null) ? this.guard.configuredBreaker() : null;
	}

	/**
	 * {@return the breakers in use (the configured one, or one per Cluster master named like
	 * {@code ratelimit-redis@10.0.0.7:6379}) for health and metrics, or null without a breaker}
	 */
	public @Nullable CircuitBreakerRegistry circuitBreakers() {
		return (this.guard != null) ? this.guard.registry() : null;
	}

	/** {@return the time budget of a backend call, or null when calls wait for the backend's own timeout} */
	public @Nullable Duration timeout() {
		return (this.guard != null) ? this.guard.timeout : null;
	}

	/**
	 * {@return whether a circuit breaker is open or probing, or the failure modes made one of the last
	 * {@value #RECENT_DECISIONS} guarded decisions; always false unguarded}
	 */
	public boolean degraded() {
		return this.guard != null && this.guard.degraded();
	}

	/** {@return how many of the last {@value #RECENT_DECISIONS} guarded decisions the failure modes made} */
	public int recentFailureModeDecisions() {
		return (this.guard != null) ? this.guard.recentFailureModeDecisions() : 0;
	}

	/** {@return the failure of the backend's last failed call while {@link #degraded()}, else null} */
	public @Nullable Throwable lastFailure() {
		return (this.guard != null) ? this.guard.lastFailure() : null;
	}

	/** {@return the cache of the backend's denials this limiter answers from, or null} */
	public @Nullable RateLimitDenialCache denialCache() {
		return this.denialCache;
	}

	/** {@return the backend the limiter decides with} */
	public RateLimitBackend backend() {
		return this.backend;
	}

	/** {@return how often a guarded limiter met this kind of backend trouble since it was built, 0 unguarded} */
	public long errorCount(BackendErrorKind kind) {
		return this.errors.count(kind);
	}

	/** {@return the concurrency permits this instance's requests hold for the named policy, in units of cost} */
	public long permitsInFlight(String policy) {
		return this.permitsInFlight.get(policy);
	}

	@Override
	public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return Mono.just(EMPTY);
		}
		if (!this.backend.answersAtOnce(request)) {
			return waited(request);
		}
		// a reactive caller's at-once path (the gateway; the WebFlux filter asks checkAtOnce itself): tried when the
		// subscriber asks (one that cancels first took nothing), else the layers' Mono; observed under Reactor's
		// context's observation, as the layers' are
		return Mono.deferContextual((reactorContext) -> Mono
			.fromCallable(() -> atOnce(request, reactorContext.getOrDefault(OBSERVATION_KEY, null)))
			.switchIfEmpty(Mono.defer(() -> waited(request))));
	}

	@Override
	public Mono<RateLimitDecision> checkAsyncAfterAtOnce(RateLimitRequest request) {
		return request.entries().isEmpty() ? Mono.just(EMPTY) : waited(request);
	}

	private Mono<RateLimitDecision> waited(RateLimitRequest request) {
		Mono<RateLimitDecision> decision = decide(request);
		return this.observationRegistry.isNoop() ? decision : observed(request, decision);
	}

	/** When the layers answer without waiting: architecture.md, "Answers made at once". */
	@Override
	public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request) {
		return attempt(request, null);
	}

	@Override
	public @Nullable RateLimitDecision checkAtOnce(RateLimitRequest request, ContextView context) {
		return attempt(request, context.getOrDefault(OBSERVATION_KEY, null));
	}

	private @Nullable RateLimitDecision attempt(RateLimitRequest request, @Nullable Object parent) {
		if (request.entries().isEmpty()) {
			return EMPTY;
		}
		if (!this.backend.answersAtOnce(request)) {
			return null; // asked first: a request only Redis can answer pays nothing more for this path
		}
		return atOnce(request, parent);
	}

	/**
	 * {@link #checkAtOnce} of a request with entries that the backend may answer at once (both asked before),
	 * observed under the given parent (else the thread's current observation).
	 */
	private @Nullable RateLimitDecision atOnce(RateLimitRequest request, @Nullable Object parent) {
		RateLimitDecision now = (ShadowSplit.of(request) == null) ? this.decider.decideAtOnce(request) : null;
		if (now == null) {
			return null;
		}
		now = logShadowDenials(now);
		if (!this.observationRegistry.isNoop()) {
			// observed as made: a decision without a wait has no duration worth timing, and an observation started
			// before asking would be a second one when the layers cannot answer at once
			RateLimitObservationContext context = observationContext(request);
			context.setDecision(now);
			Observation observation = observation(context);
			if (parent instanceof Observation parentObservation) {
				observation.parentObservation(parentObservation);
			}
			observation.start().stop();
		}
		return now;
	}

	private RateLimitObservationContext observationContext(RateLimitRequest request) {
		return new RateLimitObservationContext(request.entries().stream().map(RateLimitRequest.Entry::policy).toList(),
				this.backend.kind());
	}

	private Observation observation(RateLimitObservationContext context) {
		return Observation.createNotStarted(this.observationConvention, DEFAULT_CONVENTION, () -> context,
				this.observationRegistry);
	}

	/**
	 * The decision, observed under Reactor's context's observation, else the thread's; stopped once, before the
	 * decision goes on (whoever gets it finds the observation complete).
	 */
	private Mono<RateLimitDecision> observed(RateLimitRequest request, Mono<RateLimitDecision> decision) {
		return Mono.deferContextual((reactorContext) -> {
			RateLimitObservationContext context = observationContext(request);
			Observation observation = observation(context);
			Object parent = reactorContext.hasKey(OBSERVATION_KEY) ? reactorContext.get(OBSERVATION_KEY) : null;
			if (parent instanceof Observation parentObservation) {
				observation.parentObservation(parentObservation);
			}
			observation.start();
			AtomicBoolean stopped = new AtomicBoolean();
			return decision.doOnSuccess((made) -> {
				if (made != null) {
					context.setDecision(made);
				}
				stopOnce(observation, stopped, null);
			})
				.doOnError((ex) -> stopOnce(observation, stopped, ex))
				.doOnCancel(() -> stopOnce(observation, stopped, null));
		});
	}

	private static void stopOnce(Observation observation, AtomicBoolean stopped, @Nullable Throwable error) {
		if (stopped.compareAndSet(false, true)) {
			if (error != null) {
				observation.error(error);
			}
			observation.stop();
		}
	}

	/** Shadow entries apart from the others when both kinds are present ({@link ShadowSplit}), each through the layers. */
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

	/** Builds a {@link DefaultRateLimiter}: guarded unless {@link #guarded(boolean) guarded(false)} is set. */
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

		/** The longest (positive) a decision waits before the failure modes decide; none: the client's timeout. */
		public Builder timeout(Duration timeout) {
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("Timeout must be positive but was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * A circuit breaker: while open, the failure modes decide without trying the backend. Each shard of a sharded
		 * backend ({@link RateLimitBackend#shard}) gets a breaker of this configuration.
		 */
		public Builder circuitBreaker(CircuitBreaker circuitBreaker) {
			this.circuitBreaker = circuitBreaker;
			return this;
		}

		/** Where {@link FailureMode#LOCAL} policies are enforced while the backend fails; by default in memory. */
		public Builder fallback(RateLimitBackend fallback) {
			this.fallback = fallback;
			return this;
		}

		/**
		 * The retry-after of a {@link FailureMode#CLOSED} refusal; by default the circuit breaker's wait in the open
		 * state (at least a second), or one second without a breaker.
		 */
		public Builder closedRetryAfter(Duration retryAfter) {
			this.closedRetryAfter = retryAfter;
			return this;
		}

		/** Where each decision is observed; none by default (no observation context is made at all). */
		public Builder observationRegistry(ObservationRegistry observationRegistry) {
			this.observationRegistry = observationRegistry;
			return this;
		}

		/** A convention to replace {@link DefaultRateLimitObservationConvention}'s name and key values (null: none). */
		public Builder observationConvention(@Nullable RateLimitObservationConvention observationConvention) {
			this.observationConvention = observationConvention;
			return this;
		}

		/**
		 * Whether the limiter is guarded (the default). Unguarded, backend failures reach the caller, and the guard's
		 * settings (timeout, circuit breaker, fallback, closed retry-after) must not be set.
		 */
		public Builder guarded(boolean guarded) {
			this.guarded = guarded;
			return this;
		}

		/**
		 * A cache of the backend's denials, for this limiter only: an identity denied until a time is denied again
		 * until then without a backend call ({@link RateLimitDenialCache} says where it is not exact). None by default.
		 */
		public Builder denialCache(RateLimitDenialCache denialCache) {
			this.denialCache = denialCache;
			return this;
		}

		/** The layers between the limiter and the backend, in order (architecture.md, "The composition"). */
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

		private Duration defaultClosedRetryAfter() {
			if (this.circuitBreaker == null) {
				return Duration.ofSeconds(1);
			}
			long waitMillis = this.circuitBreaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1);
			return Duration.ofMillis(Math.max(1000, waitMillis));
		}

		/**
		 * {@return the limiter, guarded unless {@link #guarded(boolean) guarded(false)}}
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
