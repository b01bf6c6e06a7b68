package io.github.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;

/**
 * Leased quotas over the Redis backend: a leased policy's single-entry requests are decided from a slice of its quota
 * this instance took from Redis in one atomic call; the slice is topped up before it runs out, given back when the
 * key goes idle and when the instance stops, and lapses at a bound. Nothing is admitted that was not taken from Redis
 * first, so the limit holds across instances (architecture, "Leased quotas"). Other requests go to the backend.
 */
public final class LeasingBackend implements RateLimitBackend, SmartLifecycle, AutoCloseable {

	/** Stops before the backend's connection closes (its phase), after the web server's graceful shutdown. */
	public static final int PHASE = RedisRateLimitBackend.PHASE + 1;

	private static final Log logger = LogFactory.getLog(LeasingBackend.class);

	/** The longest a stop waits for its give-backs: a silent Redis must not hold the shutdown. */
	private static final Duration STOP_WAIT = Duration.ofSeconds(2);

	private final RedisRateLimitBackend backend;

	private final Map<String, LeaseSettings> leases;

	/** This instance's name on Redis' records of slices: new at each start (a restored checkpoint is another). */
	private volatile String instance = newInstance();

	private final Map<String, LeasedSlice> slices = new ConcurrentHashMap<>();

	/** Numbers this instance's calls in the order they are sent (scripts/lease.lua ignores one overtaken). */
	private final AtomicLong calls = new AtomicLong();

	private final LeasedRequests mixed = new LeasedRequests(this);

	/** Marks of the slices' states ({@link LeasedSlice#putBack}): unique for the backend's life. */
	private final AtomicLong marks = new AtomicLong();

	private volatile @Nullable Disposable sweeper;

	/**
	 * @param backend the Redis backend the slices are taken from and every other request goes to
	 * @param leases the leased policies' settings by policy name; each policy a token bucket or a fixed window
	 */
	public LeasingBackend(RedisRateLimitBackend backend, Map<String, LeaseSettings> leases) {
		this.backend = backend;
		this.leases = Map.copyOf(leases);
	}

	private static String newInstance() {
		return UUID.randomUUID().toString().substring(0, 13);
	}

	/** {@return the leased policies' settings by name} */
	public Map<String, LeaseSettings> leases() {
		return this.leases;
	}

	@Override
	public Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		if (request.hasExplicitTime() || !anyLeased(request.entries())) {
			return this.backend.acquire(request, requestId);
		}
		if (request.entries().size() == 1) {
			Entry entry = request.entries().get(0);
			return Mono.defer(() -> spendOrTake(entry));
		}
		return this.mixed.acquire(request, requestId);
	}

	/** A leased single-entry request that this instance's slice holds the cost of: spent now (see spendOrTake). */
	@Override
	public @Nullable Acquisition acquireAtOnce(RateLimitRequest request, String requestId) {
		if (!answersAtOnce(request)) {
			return null;
		}
		Entry entry = request.entries().get(0);
		LeasedSlice slice = slice(entry);
		synchronized (slice) {
			return (slice.retired() || slice.takenUnderOther(entry.policy())) ? null
					: spend(slice, entry, System.nanoTime());
		}
	}

	/** A leased single-entry request on the server's clock. */
	@Override
	public boolean answersAtOnce(RateLimitRequest request) {
		return request.entries().size() == 1 && !request.hasExplicitTime() && leased(request.entries().get(0));
	}

	@Override
	public Mono<Void> probe(RateLimitRequest request) {
		return this.backend.probe(request);
	}

	private boolean anyLeased(List<Entry> entries) {
		for (Entry entry : entries) { // a loop: asked of every request
			if (leased(entry)) {
				return true;
			}
		}
		return false;
	}

	/** Whether an entry is decided from a slice: its policy is leased, and its algorithm can be. */
	boolean leased(Entry entry) {
		return this.leases.containsKey(entry.policy().name()) && LeaseSettings.supports(entry.policy().algorithm());
	}

	/** This instance's name in Redis' records of slices. */
	String instance() {
		return this.instance;
	}

	RedisRateLimitBackend backend() {
		return this.backend;
	}

	/** Spends from the slice, else waits for the take in flight or starts one, and tries again once it answered. */
	Mono<Acquisition> spendOrTake(Entry entry) {
		LeasedSlice slice = slice(entry);
		CompletableFuture<LeaseCall.Reply> call;
		synchronized (slice) {
			if (slice.retired()) {
				return spendOrTake(entry);
			}
			long now = System.nanoTime();
			if (slice.takenUnderOther(entry.policy())) {
				// an override changed the limits: the slice goes back, and the next take is under the new ones
				CompletableFuture<LeaseCall.Reply> inFlight = slice.inFlight();
				call = (inFlight != null) ? inFlight : giveBack(slice, slice.givingBackAs(), now);
				return Mono.fromFuture(call, true).flatMap((reply) -> spendOrTake(entry));
			}
			Acquisition spent = spend(slice, entry, now);
			if (spent != null) {
				return Mono.just(spent);
			}
			CompletableFuture<LeaseCall.Reply> inFlight = slice.inFlight();
			call = (inFlight != null) ? inFlight : take(slice, entry, settings(entry), entry.cost(), now);
		}
		return Mono.fromFuture(call, true).flatMap((reply) -> afterCall(slice, entry, reply));
	}

	/** Spends from the slice (holding its monitor) if it holds the cost, taking ahead when it runs low; else null. */
	private @Nullable Acquisition spend(LeasedSlice slice, Entry entry, long now) {
		Acquisition spent = slice.spend(entry, now);
		if (spent != null) {
			LeaseSettings settings = settings(entry);
			if (slice.low(settings, now) && isRunning()) {
				take(slice, entry, settings, 1, now);
			}
		}
		return spent;
	}

	/** After a call: spend what it brought; a take that granted something may be followed by another. */
	private Mono<Acquisition> afterCall(LeasedSlice slice, Entry entry, LeaseCall.Reply reply) {
		synchronized (slice) {
			long now = System.nanoTime();
			Acquisition spent = slice.retired() ? null : slice.spend(entry, now);
			if (spent != null) {
				return Mono.just(spent);
			}
			if (reply.take() && reply.granted() == 0) {
				return Mono.just(slice.denied(entry, reply, now));
			}
		}
		// others spent what it brought, or it was a give-back: ask again (Redis denies once nothing is left)
		return spendOrTake(entry);
	}

	/** Puts a released leased entry's cost back into its slice, if that is still exact ({@link LeasedSlice#putBack}). */
	void putBack(Entry entry, long spentAt) {
		LeasedSlice slice = this.slices.get(this.backend.key(entry.policy(), entry.identity()));
		if (slice != null) {
			synchronized (slice) {
				slice.putBack(entry, spentAt, System.nanoTime());
			}
		}
	}

	/** What a request of the entry's cost would find now in this instance's slice and Redis' last figures. */
	PolicyDecision asIs(Entry entry) {
		LeasedSlice slice = slice(entry);
		synchronized (slice) {
			return slice.asIs(entry, System.nanoTime());
		}
	}

	/** Starts a take on the slice (holding its monitor); the future completes once the reply is applied. */
	private CompletableFuture<LeaseCall.Reply> take(LeasedSlice slice, Entry entry, LeaseSettings settings,
			long need, long now) {
		long held = slice.held(now);
		long want = slice.nextWant(settings, entry.policy(), need, now);
		long bound = TimeUnit.NANOSECONDS.toMicros(settings.lapseAfter().toNanos());
		slice.takenFor(entry);
		String[] args = LeaseCall.take(entry.policy(), this.instance, held, slice.windowStart(), want, need, bound,
				this.calls.incrementAndGet());
		return send(slice, entry, args, bound, now);
	}

	/** Gives back what the slice holds (holding its monitor). */
	private CompletableFuture<LeaseCall.Reply> giveBack(LeasedSlice slice, Entry entry, long now) {
		long held = slice.handBack(now);
		String[] args = LeaseCall.giveBack(entry.policy(), this.instance, held, slice.windowStart(),
				this.calls.incrementAndGet());
		return send(slice, entry, args, 0, now);
	}

	/** Sends a take (with its lapse bound) or a give-back (bound 0); the future completes once the slice applied it. */
	private CompletableFuture<LeaseCall.Reply> send(LeasedSlice slice, Entry entry, String[] args, long boundMicros,
			long sent) {
		// a call unanswered for the lapse bound could only bring a lapsed slice: the next request sends another
		Duration timeout = settings(entry).lapseAfter();
		CompletableFuture<LeaseCall.Reply> call = this.backend.lease(entry, args)
			.map((reply) -> LeaseCall.Reply.of(boundMicros > 0, reply))
			.timeout(timeout)
			.toFuture()
			.whenComplete((reply, error) -> {
				if (reply != null) {
					synchronized (slice) {
						slice.apply(reply, boundMicros, sent, System.nanoTime());
						slice.mark(this.marks.incrementAndGet());
					}
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("A lease call for " + entry.policy().name() + " failed", error);
				}
			});
		slice.inFlight(call);
		slice.mark(this.marks.incrementAndGet());
		return call;
	}

	private LeaseSettings settings(Entry entry) {
		LeaseSettings settings = this.leases.get(entry.policy().name());
		if (settings == null) {
			throw new IllegalStateException("Policy " + entry.policy().name() + " is not leased");
		}
		return settings;
	}

	private LeasedSlice slice(Entry entry) {
		String key = this.backend.key(entry.policy(), entry.identity());
		return this.slices.computeIfAbsent(key, (k) -> new LeasedSlice(entry, System.nanoTime()));
	}

	/** Gives back idle slices and forgets the slices of keys left idle with nothing to give. */
	private void sweep() {
		long now = System.nanoTime();
		this.slices.forEach((key, slice) -> {
			synchronized (slice) {
				if (slice.callInFlight()) {
					return;
				}
				Entry entry = slice.givingBackAs();
				LeaseSettings settings = this.leases.get(entry.policy().name());
				if (settings == null || !slice.idle(settings, now)) {
					return;
				}
				if (slice.onRecord(now)) {
					giveBack(slice, entry, now);
				}
				else {
					slice.retire();
					this.slices.remove(key, slice);
				}
			}
		});
	}

	/**
	 * Releases the entries that are not leased to the backend; a leased one's cost goes back into its slice when
	 * nothing was sent or applied since it was spent (a refused or cancelled request), else it stays spent.
	 */
	@Override
	public Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros,
			List<Long> sequences) {
		return this.mixed.release(entries, requestId, acquiredAtMicros, sequences);
	}

	@Override
	public List<PolicyDecision> inspect(RateLimitRequest request) {
		return this.backend.inspect(request);
	}

	/** Resets the keys, and forgets this instance's slices of them (other instances spend theirs until they lapse). */
	@Override
	public void reset(List<Entry> entries) {
		entries.forEach((entry) -> forget(this.backend.key(entry.policy(), entry.identity())));
		this.backend.reset(entries);
	}

	@Override
	public long resetMatching(@Nullable String policyName, @Nullable String identity) {
		this.slices.keySet().forEach(this::forget);
		return this.backend.resetMatching(policyName, identity);
	}

	private void forget(String key) {
		LeasedSlice slice = this.slices.remove(key);
		if (slice != null) {
			synchronized (slice) {
				slice.handBack(System.nanoTime());
				slice.retire();
			}
		}
	}

	@Override
	public String kind() {
		return this.backend.kind();
	}

	@Override
	public @Nullable String shard(Entry entry) {
		return this.backend.shard(entry);
	}

	@Override
	public Set<String> shards() {
		return this.backend.shards();
	}

	/**
	 * Takes a new name and numbers calls from 0 (a JVM restored from a checkpoint must not share another's), and
	 * sweeps for idle slices every half of the shortest idle time.
	 */
	@Override
	public synchronized void start() {
		if (this.sweeper != null) {
			return;
		}
		this.slices.keySet().forEach(this::forget);
		this.instance = newInstance();
		this.calls.set(0);
		long period = this.leases.values()
			.stream()
			.mapToLong((settings) -> settings.idleAfter().toNanos() / 2)
			.min()
			.orElse(TimeUnit.SECONDS.toNanos(1));
		period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), period);
		this.sweeper = Schedulers.parallel().schedulePeriodically(this::sweepSafely, period, period, TimeUnit.NANOSECONDS);
	}

	private void sweepSafely() {
		try {
			sweep();
		}
		catch (RuntimeException ex) {
			logger.warn("Sweeping idle rate-limit leases failed", ex);
		}
	}

	/**
	 * Gives back every slice, waiting for Redis at most two seconds: another instance can use the quota at once. A
	 * request after the stop takes a slice again (given back at the next stop, or lapsing).
	 */
	@Override
	public void stop() {
		Disposable sweeper;
		synchronized (this) {
			sweeper = this.sweeper;
			this.sweeper = null;
		}
		if (sweeper != null) {
			sweeper.dispose();
		}
		List<CompletableFuture<?>> calls = this.slices.values().stream().map(this::giveBackOnStop).toList();
		try {
			CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
				.get(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.warn("Not every rate-limit lease was given back on stop: the rest lapses at its bound", ex);
		}
	}

	/** Gives back what the slice holds once the call in flight (a take: what it brings goes back too) landed. */
	private CompletableFuture<?> giveBackOnStop(LeasedSlice slice) {
		CompletableFuture<LeaseCall.Reply> inFlight;
		synchronized (slice) {
			inFlight = slice.inFlight();
		}
		CompletableFuture<?> landed = (inFlight != null) ? inFlight.handle((reply, error) -> true)
				: CompletableFuture.completedFuture(true);
		return landed.thenCompose((ignored) -> {
			synchronized (slice) {
				long now = System.nanoTime();
				if (slice.retired() || slice.callInFlight() || !slice.onRecord(now)) {
					return CompletableFuture.completedFuture(true);
				}
				return giveBack(slice, slice.givingBackAs(), now).thenApply((reply) -> true);
			}
		});
	}

	/** Stops: gives back every slice. */
	@Override
	public void close() {
		stop();
	}

	@Override
	public boolean isRunning() {
		return this.sweeper != null;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
