package io.github.ratelimit.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link RateLimiter} over one {@link RateLimitBackend}: evaluates a request's entries together and hands out the
 * concurrency permits of an admitted request.
 * <p>
 * Built with {@link #builder(RateLimitBackend)}, the limiter is <em>guarded</em>: a backend that fails, or does not
 * answer within the time budget, or whose circuit breaker is open, never fails the caller. Each policy's
 * {@link FailureMode} decides instead: {@link FailureMode#OPEN open} admits unchecked, {@link FailureMode#CLOSED
 * closed} refuses, {@link FailureMode#LOCAL local} decides in this instance's memory with the same algorithm. No
 * call waits longer than the budget, on the blocking and the non-blocking path alike; an answer that arrives after
 * the budget is undone (what it took is given back), since the request was decided without it. Releasing a permit
 * waits at most the budget too, and not at all while the circuit is open: a release the backend does not confirm
 * is still sent, and a concurrency permit that never reaches the backend is reclaimed after its policy's window.
 * On Redis Cluster each master has a circuit breaker of its own ({@link RateLimitBackend#shard}): a master that
 * fails keeps only its own keys from Redis, and a request whose entries live on several masters is decided per
 * master and combined (what one part took is given back when another denies).
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

	/** Where the fallback's mirrored permits are counted: nowhere read (the backend's permits are the ones held). */
	private static final PermitsInFlight MIRRORED = new PermitsInFlight();

	private static final RateLimitObservationConvention DEFAULT_CONVENTION =
			new DefaultRateLimitObservationConvention();

	/** Where Reactor's context holds the current observation (Micrometer's {@code ObservationThreadLocalAccessor}). */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	private final RateLimitBackend backend;

	private final @Nullable Guard guard;

	private final ObservationRegistry observationRegistry;

	private final @Nullable RateLimitObservationConvention observationConvention;

	private final ErrorCounts errors;

	private final PermitsInFlight permitsInFlight = new PermitsInFlight();

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
		this(backend, null, observationRegistry, observationConvention, new ErrorCounts(), null);
	}

	private DefaultRateLimiter(RateLimitBackend backend, @Nullable Guard guard, ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention observationConvention, ErrorCounts errors,
			@Nullable RateLimitDenialCache denialCache) {
		this.backend = backend;
		this.guard = guard;
		this.observationRegistry = observationRegistry;
		this.observationConvention = observationConvention;
		this.errors = errors;
		this.denialCache = denialCache;
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
	public RateLimitDecision check(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return EMPTY;
		}
		if (this.observationRegistry.isNoop()) {
			return decide(request);
		}
		RateLimitObservationContext context = observationContext(request);
		Observation observation = observation(context).start();
		try {
			RateLimitDecision decision = decide(request);
			context.setDecision(decision);
			return decision;
		}
		catch (RuntimeException | Error ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	@Override
	public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
		if (request.entries().isEmpty()) {
			return Mono.just(EMPTY);
		}
		Mono<RateLimitDecision> decision = decideAsync(request);
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
	 * Decides a request. Entries of policies in shadow mode are decided apart from the others when both kinds are
	 * present, at the same time, so that a shadow policy never changes what the others decide (the backend takes a
	 * request's entries all or nothing); when the others deny, what the shadow policies took is given back, as it
	 * would have been had they been enforced with them.
	 */
	private RateLimitDecision decide(RateLimitRequest request) {
		ShadowSplit split = ShadowSplit.of(request);
		if (split == null) {
			return logShadowDenials(decideSharded(request));
		}
		CompletableFuture<RateLimitDecision> shadow = decideShardedAsync(split.shadow).toFuture();
		RateLimitDecision enforced;
		try {
			enforced = decideSharded(split.enforced);
		}
		catch (RuntimeException | Error ex) {
			// unguarded: the failure reaches the caller, and what the shadow part takes is given back
			shadow.thenAccept((decision) -> giveBack(decision.reversal()));
			throw ex;
		}
		RateLimitDecision shadowDecision;
		try {
			shadowDecision = shadow.join();
		}
		catch (CompletionException ex) {
			// unguarded: the failure reaches the caller, and what the enforced part took is given back
			giveBack(enforced.reversal());
			throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
		}
		return logShadowDenials(combine(enforced, shadowDecision));
	}

	private Mono<RateLimitDecision> decideAsync(RateLimitRequest request) {
		ShadowSplit split = ShadowSplit.of(request);
		if (split == null) {
			return decideShardedAsync(request).map(this::logShadowDenials);
		}
		return Mono.zip(decideShardedAsync(split.enforced), decideShardedAsync(split.shadow))
			.map((both) -> logShadowDenials(combine(both.getT1(), both.getT2())));
	}

	/**
	 * Decides a request of one kind (enforced or shadow). On Redis Cluster, a request whose entries live on several
	 * masters is decided per master, each under its own circuit breaker ({@link ShardSplit}).
	 */
	private RateLimitDecision decideSharded(RateLimitRequest request) {
		ShardSplit split = (this.guard != null) ? this.guard.split(request) : null;
		return (split != null) ? split.decide(this::decideOne, this::decideOneAsync, this::giveBack)
				: decideOne(request);
	}

	private Mono<RateLimitDecision> decideShardedAsync(RateLimitRequest request) {
		ShardSplit split = (this.guard != null) ? this.guard.split(request) : null;
		return (split != null) ? split.decideAsync(this::decideOneAsync, this::giveBack) : decideOneAsync(request);
	}

	/** The decision of a request split in two: the admission and the reversal of the enforced part, plus the shadow's. */
	private RateLimitDecision combine(RateLimitDecision enforced, RateLimitDecision shadow) {
		List<PolicyDecision> all = new ArrayList<>(enforced.allDecisions());
		all.addAll(shadow.allDecisions());
		Throwable failure = enforced.failure().or(shadow::failure).orElse(null);
		if (!enforced.allowed()) {
			giveBack(shadow.reversal());
			return new RateLimitDecision(all, Permit.NONE, Permit.NONE, () -> all, failure);
		}
		return new RateLimitDecision(all, PermitPair.of(enforced.permit(), shadow.permit()),
				PermitPair.of(enforced.reversal(), shadow.reversal()), () -> {
					List<PolicyDecision> reversed = new ArrayList<>(enforced.reversed().allDecisions());
					reversed.addAll(shadow.reversed().allDecisions());
					return reversed;
				}, failure);
	}

	private void giveBack(Permit reversal) {
		if (reversal.holdsAny()) {
			reversal.releaseAsync().subscribe(null, (ex) -> {
				this.errors.add(BackendErrorKind.GIVE_BACK_FAILED);
				logger.debug("Could not give back what a part of a denied request took", ex);
			});
		}
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

	/** A request's entries in two requests: those of policies in shadow mode, and the others. */
	private record ShadowSplit(RateLimitRequest enforced, RateLimitRequest shadow) {

		/** The split, or null when the entries are all of one kind (nothing to split). */
		static @Nullable ShadowSplit of(RateLimitRequest request) {
			int shadows = 0;
			for (RateLimitRequest.Entry entry : request.entries()) {
				if (entry.policy().shadow()) {
					shadows++;
				}
			}
			if (shadows == 0 || shadows == request.entries().size()) {
				return null;
			}
			RateLimitRequest.Builder enforced = RateLimitRequest.builder();
			RateLimitRequest.Builder shadow = RateLimitRequest.builder();
			if (request.hasExplicitTime()) {
				enforced.at(request.explicitTimeMicros());
				shadow.at(request.explicitTimeMicros());
			}
			for (RateLimitRequest.Entry entry : request.entries()) {
				(entry.policy().shadow() ? shadow : enforced).add(entry.policy(), entry.identity(), entry.cost());
			}
			return new ShadowSplit(enforced.build(), shadow.build());
		}

	}

	private RateLimitDecision decideOne(RateLimitRequest request) {
		RateLimitDenialCache cache = this.denialCache;
		long epoch = 0;
		if (cache != null) {
			RateLimitDecision cached = cache.lookup(request);
			if (cached != null) {
				return cached;
			}
			epoch = cache.epoch();
		}
		String requestId = RequestIds.next();
		Guard guard = this.guard;
		if (guard == null) {
			long sent = System.nanoTime();
			return decision(request, requestId, this.backend.acquire(request, requestId), sent, epoch);
		}
		ShardBreaker breaker = guard.breaker(request);
		if (!breaker.tryAcquirePermission()) {
			return decideWithout(guard, request, requestId, breaker.callNotPermitted());
		}
		long start = System.nanoTime();
		CompletableFuture<RateLimitBackend.@Nullable Acquisition> call;
		try {
			call = this.backend.acquireAsync(request, requestId).toFuture();
		}
		catch (RuntimeException ex) {
			breaker.onError(start, ex);
			return decideWithout(guard, request, requestId, ex);
		}
		try {
			// the budget counts from before the call was dispatched: what dispatching took is spent already
			RateLimitBackend.Acquisition acquisition = (guard.timeout != null)
					? call.get(guard.remainingNanos(start), TimeUnit.NANOSECONDS) : call.get();
			breaker.onSuccess(start);
			return mirrored(guard, request, requestId, decision(request, requestId, acquisition, start, epoch));
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			breaker.onError(start, cause);
			return decideWithout(guard, request, requestId, cause);
		}
		catch (TimeoutException ex) {
			TimeoutException timeout = guard.timeoutException();
			breaker.onTimeout(start, call, timeout);
			return keptWhenLate(call, request, requestId, start, epoch,
					decideWithout(guard, request, requestId, timeout));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			breaker.releasePermission();
			return keptWhenLate(call, request, requestId, start, epoch, decideWithout(guard, request, requestId, ex));
		}
	}

	private Mono<RateLimitDecision> decideOneAsync(RateLimitRequest request) {
		Guard guard = this.guard;
		RateLimitDenialCache cache = this.denialCache;
		if (guard == null) {
			return Mono.defer(() -> {
				RateLimitDecision cached = (cache != null) ? cache.lookup(request) : null;
				if (cached != null) {
					return Mono.just(cached);
				}
				long epoch = (cache != null) ? cache.epoch() : 0;
				String requestId = RequestIds.next();
				long sent = System.nanoTime();
				return this.backend.acquireAsync(request, requestId)
					.map((acquisition) -> decision(request, requestId, acquisition, sent, epoch));
			});
		}
		return Mono.defer(() -> {
			RateLimitDecision cached = (cache != null) ? cache.lookup(request) : null;
			if (cached != null) {
				return Mono.just(cached);
			}
			long epoch = (cache != null) ? cache.epoch() : 0;
			String requestId = RequestIds.next();
			ShardBreaker breaker = guard.breaker(request);
			if (!breaker.tryAcquirePermission()) {
				return decideWithoutAsync(guard, request, requestId, breaker.callNotPermitted());
			}
			long start = System.nanoTime();
			AtomicBoolean settled = new AtomicBoolean();
			CompletableFuture<RateLimitBackend.@Nullable Acquisition> call;
			try {
				call = this.backend.acquireAsync(request, requestId).toFuture();
			}
			catch (RuntimeException ex) {
				breaker.onError(start, ex);
				return decideWithoutAsync(guard, request, requestId, ex);
			}
			// the backend call runs on whatever its own subscription needs; cancelling this one never cancels it
			Mono<RateLimitBackend.Acquisition> answer = Mono.fromFuture(call, true);
			if (guard.timeout != null) {
				// the budget counts from before the call was dispatched: what dispatching took is spent already
				answer = answer.timeout(Duration.ofNanos(guard.remainingNanos(start)),
						Mono.error(guard::timeoutException));
			}
			return answer.map((acquisition) -> {
				if (settled.compareAndSet(false, true)) {
					breaker.onSuccess(start);
				}
				return mirrored(guard, request, requestId, decision(request, requestId, acquisition, start, epoch));
			}).onErrorResume((ex) -> {
				if (settled.compareAndSet(false, true)) {
					if (ex instanceof TimeoutException timeout) {
						breaker.onTimeout(start, call, timeout);
					}
					else {
						breaker.onError(start, ex);
					}
				}
				if (ex instanceof TimeoutException) {
					// the timeout fired on a timer thread: the rest of the exchange goes on where waiting is allowed,
					// not on a timer shared by everything else
					// what the call takes is kept or given back once: by the decision, or by a cancel before it
					AtomicBoolean late = new AtomicBoolean();
					return Mono.defer(() -> decideWithoutAsync(guard, request, requestId, ex))
						.map((decided) -> late.compareAndSet(false, true)
								? keptWhenLate(call, request, requestId, start, epoch, decided) : decided)
						.doOnCancel(() -> {
							if (late.compareAndSet(false, true)) {
								undoWhenLate(call, request, requestId, start, epoch);
							}
						})
						.subscribeOn(Schedulers.boundedElastic());
				}
				return decideWithoutAsync(guard, request, requestId, ex);
			}).doOnCancel(() -> {
				if (settled.compareAndSet(false, true)) {
					breaker.releasePermission();
					undoWhenLate(call, request, requestId, start, epoch);
				}
			});
		});
	}

	/**
	 * The failure modes' decision of a request whose backend call was given up on but may still answer. When they
	 * admitted it, the request is served and what the call takes stays counted (its permits held with the request's,
	 * see {@link PendingPermits}); when they refused it, what the call takes is given back.
	 */
	private RateLimitDecision keptWhenLate(CompletableFuture<RateLimitBackend.@Nullable Acquisition> call,
			RateLimitRequest request, String requestId, long sentNanos, long epoch, RateLimitDecision decided) {
		if (!decided.allowed()) {
			undoWhenLate(call, request, requestId, sentNanos, epoch);
			return decided;
		}
		PendingPermits late = new PendingPermits(request);
		call.whenComplete((acquisition, failure) -> late
			.land((acquisition != null) ? decision(request, requestId, acquisition, sentNanos, epoch) : null));
		return late.joinedTo(decided);
	}

	/**
	 * An admission the backend made, counted by the fallback too for the policies that fail to {@code local}: the
	 * fallback, once it decides, then knows every request this instance served, not only those it decided itself, so
	 * it never admits more than the limit per instance. The fallback's own answer does not change the decision.
	 */
	private RateLimitDecision mirrored(Guard guard, RateLimitRequest request, String requestId,
			RateLimitDecision decision) {
		RateLimitRequest local = decision.allowed() ? localPart(request) : null;
		if (local == null) {
			return decision;
		}
		PendingPermits mirror = new PendingPermits(local);
		guard.fallback.acquireAsync(local, requestId)
			.subscribe((acquisition) -> mirror.land(DefaultRateLimiter.decision(local.entries(),
					acquisition.decisions(), guard.fallback, null, local.entries(), requestId,
					acquisition.entryTimesMicros(), acquisition.entrySequences(), null, MIRRORED, null)),
					(ex) -> mirror.land(null));
		return mirror.joinedTo(decision);
	}

	/** The entries of policies that fail to {@code local}, or null when there are none (most requests). */
	private static @Nullable RateLimitRequest localPart(RateLimitRequest request) {
		RateLimitRequest.Builder local = null;
		for (RateLimitRequest.Entry entry : request.entries()) {
			if (entry.policy().failureMode() == FailureMode.LOCAL) {
				if (local == null) {
					local = RateLimitRequest.builder();
					if (request.hasExplicitTime()) {
						local.at(request.explicitTimeMicros());
					}
				}
				local.add(entry.policy(), entry.identity(), entry.cost());
			}
		}
		return (local != null) ? local.build() : null;
	}

	/**
	 * Gives back what a call that was given up on takes once it answers after all, for a request that was refused
	 * (or never decided): whatever the backend took for it would otherwise count against the identity, and a
	 * concurrency permit would be held until its lease ends. The answer still teaches the denial cache.
	 */
	private void undoWhenLate(CompletableFuture<RateLimitBackend.@Nullable Acquisition> call,
			RateLimitRequest request, String requestId, long sentNanos, long epoch) {
		call.whenComplete((acquisition, failure) -> {
			if (acquisition == null) {
				return;
			}
			learn(request, acquisition, sentNanos, epoch);
			if (acquisition.decisions().stream().allMatch(PolicyDecision::allowed)) {
				this.backend
					.releaseAsync(request.entries(), requestId, acquisition.entryTimesMicros(),
							acquisition.entrySequences())
					.doOnTerminate(() -> forget(request.entries()))
					.subscribe(null, (ex) -> {
						this.errors.add(BackendErrorKind.GIVE_BACK_FAILED);
						logger.debug("Could not give back a late rate-limit acquisition", ex);
					});
			}
		});
	}

	/** Forgets the cached denials of entries whose cost went back to the backend. */
	private void forget(List<RateLimitRequest.Entry> entries) {
		if (this.denialCache != null) {
			this.denialCache.forget(entries);
		}
	}

	/**
	 * The decision of the backend's answer, which the denial cache learns from.
	 * @param sentNanos when the call was sent
	 * @param epoch the denial cache's epoch before it was sent
	 */
	private RateLimitDecision decision(RateLimitRequest request, String requestId,
			RateLimitBackend.Acquisition acquisition, long sentNanos, long epoch) {
		learn(request, acquisition, sentNanos, epoch);
		return decision(request.entries(), acquisition.decisions(), this.backend, this.guard, request.entries(),
				requestId, acquisition.entryTimesMicros(), acquisition.entrySequences(), null, this.permitsInFlight,
				this.denialCache);
	}

	/** Counts the give-backs an answer reports failed, and teaches the denial cache what it says. */
	private void learn(RateLimitRequest request, RateLimitBackend.Acquisition acquisition, long sentNanos,
			long epoch) {
		for (int i = 0; i < acquisition.failedGiveBacks(); i++) {
			this.errors.add(BackendErrorKind.GIVE_BACK_FAILED);
		}
		if (this.denialCache != null) {
			this.denialCache.record(request, acquisition.decisions(), acquisition.exhaustedForMicros(), sentNanos,
					epoch);
		}
	}

	/**
	 * A decision with the permits that give back what a backend took when the request is admitted.
	 * @param entries the request's entries
	 * @param decisions one decision per entry
	 * @param source the backend that took something
	 * @param guard the guard of releases to that backend, or null to release unguarded
	 * @param taken the entries that backend took
	 * @param requestId the request id
	 * @param acquiredAtMicros when the backend took each of them
	 * @param sequences the first sequence number the backend gave each of them
	 * @param failure why the failure modes decided, or null
	 * @param inFlight where the permits handed out are counted until released
	 * @param denialCache the denial cache to tell of give-backs to that backend, or null
	 */
	private static RateLimitDecision decision(List<RateLimitRequest.Entry> entries, List<PolicyDecision> decisions,
			RateLimitBackend source, @Nullable Guard guard, List<RateLimitRequest.Entry> taken, String requestId,
			List<Long> acquiredAtMicros, List<Long> sequences, @Nullable Throwable failure, PermitsInFlight inFlight,
			@Nullable RateLimitDenialCache denialCache) {
		if (!decisions.stream().allMatch(PolicyDecision::allowed)) {
			return new RateLimitDecision(decisions, Permit.NONE, Permit.NONE, () -> decisions, failure);
		}
		List<RateLimitRequest.Entry> held = new ArrayList<>();
		List<Long> heldSince = new ArrayList<>();
		List<Long> heldSequences = new ArrayList<>();
		for (int i = 0; i < taken.size(); i++) {
			if (taken.get(i).policy().algorithm().holdsPermits()) {
				held.add(taken.get(i));
				heldSince.add(acquiredAtMicros.get(i));
				heldSequences.add(sequences.get(i));
			}
		}
		Permit permit = held.isEmpty() ? Permit.NONE
				: new BackendPermit(source, guard, held, requestId, heldSince, heldSequences, inFlight, null);
		Permit reversal = new BackendPermit(source, guard, taken, requestId, acquiredAtMicros, sequences, null,
				denialCache);
		return new RateLimitDecision(decisions, permit, reversal, () -> reversed(entries, decisions), failure);
	}

	/** The decisions of admitted entries with each counted entry's cost given back. */
	private static List<PolicyDecision> reversed(List<RateLimitRequest.Entry> entries,
			List<PolicyDecision> decisions) {
		List<PolicyDecision> reversed = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			PolicyDecision decision = decisions.get(i);
			if (!decision.allowed() || !decision.enforcement().hasFigures()) {
				reversed.add(decision);
				continue;
			}
			long cost = entries.get(i).cost();
			long remaining = Math.min(decision.policy().capacity(), decision.remaining() + cost);
			reversed.add(new PolicyDecision(decision.policy(), decision.identity(), true, remaining,
					resetAfterGivingBack(decision, cost, remaining), decision.retryAfter(), decision.enforcement()));
		}
		return reversed;
	}

	/**
	 * The time until a policy is full once a cost is given back: nothing left to refill when it is full again; for
	 * the refilling algorithms (token bucket, GCRA) the cost's refill time less; for the others (their quota comes
	 * back when entries or windows expire) the time as it was, which can only be later than the truth.
	 */
	private static Duration resetAfterGivingBack(PolicyDecision decision, long cost, long remaining) {
		RateLimitPolicy policy = decision.policy();
		if (remaining >= policy.capacity()) {
			return Duration.ZERO;
		}
		if (policy.algorithm() == Algorithm.TOKEN_BUCKET || policy.algorithm() == Algorithm.GCRA) {
			Duration refill = Duration.of(Math.multiplyExact(policy.windowMicros(), cost) / policy.limit(),
					ChronoUnit.MICROS);
			Duration reset = decision.resetAfter().minus(refill);
			return reset.isNegative() ? Duration.ZERO : reset;
		}
		return decision.resetAfter();
	}

	/**
	 * Decides a request by its policies' failure modes: open entries admitted unchecked, closed entries
	 * refused, local entries evaluated together on the fallback backend.
	 */
	private RateLimitDecision decideWithout(Guard guard, RateLimitRequest request, String requestId,
			Throwable failure) {
		WithoutBackend without = new WithoutBackend(guard, request, requestId, failure, this.permitsInFlight);
		if (without.local == null) {
			return without.decision(null);
		}
		RateLimitBackend.Acquisition acquisition = guard.fallback.acquire(without.local, requestId);
		if (without.givesBack(acquisition)) {
			guard.fallback.release(without.local.entries(), requestId, acquisition.entryTimesMicros(),
					acquisition.entrySequences());
		}
		return without.decision(acquisition);
	}

	/** {@link #decideWithout} on the fallback's non-blocking path, for callers on an event loop. */
	private Mono<RateLimitDecision> decideWithoutAsync(Guard guard, RateLimitRequest request, String requestId,
			Throwable failure) {
		WithoutBackend without = new WithoutBackend(guard, request, requestId, failure, this.permitsInFlight);
		RateLimitRequest local = without.local;
		if (local == null) {
			return Mono.just(without.decision(null));
		}
		return guard.fallback.acquireAsync(local, requestId).flatMap((acquisition) -> {
			Mono<Void> giveBack = without.givesBack(acquisition)
					? guard.fallback.releaseAsync(local.entries(), requestId, acquisition.entryTimesMicros(),
							acquisition.entrySequences())
					: Mono.empty();
			return giveBack.then(Mono.fromSupplier(() -> without.decision(acquisition)));
		});
	}

	/** A request decided by the failure modes: what open and closed entries decide, and the local entries' request. */
	private static final class WithoutBackend {

		private final RateLimitRequest request;

		private final String requestId;

		private final Throwable failure;

		private final RateLimitBackend fallback;

		private final PolicyDecision[] decisions;

		private final List<Integer> localIndexes = new ArrayList<>();

		private final @Nullable RateLimitRequest local;

		private final PermitsInFlight inFlight;

		private boolean refused;

		WithoutBackend(Guard guard, RateLimitRequest request, String requestId, Throwable failure,
				PermitsInFlight inFlight) {
			this.inFlight = inFlight;
			this.request = request;
			this.requestId = requestId;
			this.failure = failure;
			this.fallback = guard.fallback;
			List<RateLimitRequest.Entry> entries = request.entries();
			this.decisions = new PolicyDecision[entries.size()];
			RateLimitRequest.Builder local = RateLimitRequest.builder();
			if (request.hasExplicitTime()) {
				local.at(request.explicitTimeMicros());
			}
			for (int i = 0; i < entries.size(); i++) {
				RateLimitRequest.Entry entry = entries.get(i);
				switch (entry.policy().failureMode()) {
					case OPEN -> this.decisions[i] = PolicyDecision.failedOpen(entry);
					case CLOSED -> {
						this.decisions[i] = PolicyDecision.failedClosed(entry, guard.closedRetryAfter);
						this.refused = true;
					}
					case LOCAL -> {
						this.localIndexes.add(i);
						local.add(entry.policy(), entry.identity(), entry.cost());
					}
				}
			}
			this.local = this.localIndexes.isEmpty() ? null : local.build();
		}

		/** Whether what the local entries took must go back: a closed policy refuses the request. */
		boolean givesBack(RateLimitBackend.Acquisition acquisition) {
			return this.refused && acquisition.decisions().stream().allMatch(PolicyDecision::allowed);
		}

		RateLimitDecision decision(RateLimitBackend.@Nullable Acquisition acquisition) {
			List<RateLimitRequest.Entry> entries = this.request.entries();
			if (acquisition == null || this.local == null) {
				List<PolicyDecision> all = List.of(this.decisions);
				return new RateLimitDecision(all, Permit.NONE, Permit.NONE, () -> all, this.failure);
			}
			for (int j = 0; j < this.localIndexes.size(); j++) {
				this.decisions[this.localIndexes.get(j)] = acquisition.decisions().get(j).asLocalFallback();
			}
			List<PolicyDecision> all = List.of(this.decisions);
			if (givesBack(acquisition)) {
				all = reversed(entries, all);
			}
			return DefaultRateLimiter.decision(entries, all, this.fallback, null, this.local.entries(),
					this.requestId, acquisition.entryTimesMicros(), acquisition.entrySequences(), this.failure,
					this.inFlight, null);
		}

	}

	private static final class BackendPermit implements Permit {

		private final RateLimitBackend backend;

		private final @Nullable Guard guard;

		private final List<RateLimitRequest.Entry> entries;

		private final String requestId;

		private final List<Long> acquiredAtMicros;

		private final List<Long> sequences;

		private final AtomicBoolean released = new AtomicBoolean();

		/** Where the permits are counted while held, or null when this permit is not counted (a reversal). */
		private final @Nullable PermitsInFlight inFlight;

		/** The denial cache that forgets these entries once they are given back, or null. */
		private final @Nullable RateLimitDenialCache denialCache;

		BackendPermit(RateLimitBackend backend, @Nullable Guard guard, List<RateLimitRequest.Entry> entries,
				String requestId, List<Long> acquiredAtMicros, List<Long> sequences,
				@Nullable PermitsInFlight inFlight, @Nullable RateLimitDenialCache denialCache) {
			this.backend = backend;
			this.guard = guard;
			this.entries = entries;
			this.requestId = requestId;
			this.acquiredAtMicros = acquiredAtMicros;
			this.sequences = sequences;
			this.inFlight = inFlight;
			this.denialCache = denialCache;
			if (inFlight != null) {
				inFlight.add(entries, 1);
			}
		}

		/** Counts the permits as released: once, when this permit is released for good. */
		private void released() {
			if (this.inFlight != null) {
				this.inFlight.add(this.entries, -1);
			}
		}

		/**
		 * The backend's release; once it is over (whatever its outcome: it may have landed), the cached denials of
		 * these entries are forgotten, since the backend may have more room than they say.
		 */
		private Mono<Void> backendRelease() {
			Mono<Void> release = this.backend.releaseAsync(this.entries, this.requestId, this.acquiredAtMicros,
					this.sequences);
			RateLimitDenialCache cache = this.denialCache;
			// before the outcome is passed on, so that whoever waits for the release finds the denials forgotten
			return (cache != null) ? release.doOnTerminate(() -> cache.forget(this.entries))
				.doOnCancel(() -> cache.forget(this.entries)) : release;
		}

		/** Releases once; unguarded, a release that fails can be tried again. */
		@Override
		public void release() {
			if (this.released.compareAndSet(false, true)) {
				if (this.guard != null) {
					released();
					this.guard.release(this.entries, backendRelease());
					return;
				}
				try {
					this.backend.release(this.entries, this.requestId, this.acquiredAtMicros, this.sequences);
				}
				catch (RuntimeException ex) {
					this.released.set(false);
					throw ex;
				}
				finally {
					if (this.denialCache != null) {
						this.denialCache.forget(this.entries);
					}
				}
				released();
			}
		}

		@Override
		public Mono<Void> releaseAsync() {
			return Mono.defer(() -> {
				if (!this.released.compareAndSet(false, true)) {
					return Mono.empty();
				}
				if (this.guard != null) {
					released();
					return this.guard.releaseAsync(this.entries, backendRelease());
				}
				return backendRelease().doOnSuccess((done) -> released())
					.doOnError((ex) -> this.released.set(false));
			});
		}

		@Override
		public boolean holdsAny() {
			return !this.released.get();
		}

	}

	/** The concurrency permits held, by policy name, in units of cost. */
	private static final class PermitsInFlight {

		private final ConcurrentHashMap<String, AtomicLong> held = new ConcurrentHashMap<>();

		void add(List<RateLimitRequest.Entry> entries, int sign) {
			for (RateLimitRequest.Entry entry : entries) {
				if (entry.policy().algorithm().holdsPermits()) {
					this.held.computeIfAbsent(entry.policy().name(), (name) -> new AtomicLong())
						.addAndGet(sign * (long) entry.cost());
				}
			}
		}

		long get(String policy) {
			AtomicLong count = this.held.get(policy);
			return (count != null) ? count.get() : 0;
		}

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

		private Duration defaultClosedRetryAfter() {
			if (this.circuitBreaker == null) {
				return Duration.ofSeconds(1);
			}
			long waitMillis = this.circuitBreaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1);
			return Duration.ofMillis(Math.max(1000, waitMillis));
		}

		/**
		 * Builds the limiter.
		 * @return the limiter, guarded unless {@link #guarded(boolean) guarded(false)}
		 * @throws IllegalStateException when unguarded with a setting of the guard
		 */
		public DefaultRateLimiter build() {
			if (!this.guarded) {
				if (this.timeout != null || this.circuitBreaker != null || this.fallback != null
						|| this.closedRetryAfter != null) {
					throw new IllegalStateException("An unguarded limiter has no timeout, circuit breaker, fallback "
							+ "or closed retry-after; remove them or keep the limiter guarded");
				}
				return new DefaultRateLimiter(this.backend, null, this.observationRegistry, this.observationConvention,
						new ErrorCounts(), this.denialCache);
			}
			RateLimitBackend fallback = (this.fallback != null) ? this.fallback : new LocalRateLimitBackend();
			Duration retryAfter = (this.closedRetryAfter != null) ? this.closedRetryAfter : defaultClosedRetryAfter();
			ErrorCounts errors = new ErrorCounts();
			Guard guard = new Guard(this.backend, this.timeout, this.circuitBreaker, fallback, retryAfter, errors);
			return new DefaultRateLimiter(this.backend, guard, this.observationRegistry, this.observationConvention,
					errors, this.denialCache);
		}

	}

}
