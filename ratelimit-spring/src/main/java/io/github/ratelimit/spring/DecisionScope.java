package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.Waits;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * What the rate limiter holds of one request: the decisions made for it and the permits, released once by
 * {@link #close()} (a permit arriving after that at once). Public for the adapters, not an extension point.
 */
public class DecisionScope {

	private static final Log logger = LogFactory.getLog(DecisionScope.class);

	private final List<RateLimitDecision> decisions = new CopyOnWriteArrayList<>();

	private final List<Permit> permits = new CopyOnWriteArrayList<>();

	private boolean closed;

	/**
	 * Checks targets for the request (method and arguments null in a filter) and {@link #admit admits} the decision
	 * without a wait for a turn. Keys are resolved on subscription; a decision the limiter makes at once (a leased
	 * slice's spend) is made when the subscriber asks, recorded at once and emitted without the operators a decision
	 * from Redis needs.
	 */
	public Mono<RateLimitDecision> admit(RateLimitEnforcer enforcer, RequestContext request,
			List<RateLimitEnforcer.Target> targets, @Nullable Method method, @Nullable Object @Nullable [] args,
			Consumer<RateLimitDecision> onAdmitted) {
		return Mono.deferContextual((context) -> {
			RateLimitEnforcer.Resolved resolved = enforcer.resolve(request, targets, method, args);
			return Mono.fromCallable(() -> admitAtOnce(resolved, context, onAdmitted))
				.switchIfEmpty(Mono.defer(() -> admit(check(resolved.async()), Duration.ZERO, onAdmitted)));
		});
	}

	/** The decision made at once and admitted, else null (nothing taken); a denial is thrown. */
	private @Nullable RateLimitDecision admitAtOnce(RateLimitEnforcer.Resolved resolved, ContextView context,
			Consumer<RateLimitDecision> onAdmitted) {
		List<RateLimitDecision> earlier = admitted();
		RateLimitDecision decision = resolved.atOnce(context);
		if (decision == null) {
			return null;
		}
		if (!recorded(decision)) {
			release(decision.permit()).subscribe(); // closed meanwhile: whatever it holds goes back at once
		}
		RateLimitExceededException denial = settle(decision, earlier, onAdmitted);
		if (denial != null) {
			throw denial;
		}
		return decision;
	}

	/**
	 * What a recorded decision comes to: null once admitted ({@code onAdmitted} given all admitted decisions merged),
	 * else the denial, reporting the {@code earlier} admitted decisions as given back.
	 */
	private @Nullable RateLimitExceededException settle(RateLimitDecision decision, List<RateLimitDecision> earlier,
			Consumer<RateLimitDecision> onAdmitted) {
		if (!decision.allowed()) {
			return new RateLimitExceededException(RateLimitDecision.mergeDenied(earlier, decision));
		}
		onAdmitted.accept(RateLimitDecision.merge(admitted()));
		return null;
	}

	/** Records a check's decision; not cancelled with its subscriber (a cancelled request's permit is released). */
	Mono<RateLimitDecision> check(Mono<RateLimitDecision> check) {
		return uncancellable(check).flatMap((decision) -> record(decision).thenReturn(decision));
	}

	/**
	 * Admits a {@link #check} (subscribed again per try): emits its decision once admitted, after handing all admitted
	 * decisions merged (the headers) to {@code onAdmitted}. Denied, it waits out the retry-after and tries again while
	 * that ends within {@code maxWait} of the first try, else signals a {@link RateLimitExceededException} reporting
	 * the earlier admitted decisions as given back ({@link #reverseAdmitted} gives them back for the rejection).
	 */
	public Mono<RateLimitDecision> admit(Mono<RateLimitDecision> check, Duration maxWait,
			Consumer<RateLimitDecision> onAdmitted) {
		return Mono.defer(() -> admit(check, maxWait, System.nanoTime() + maxWait.toNanos(), onAdmitted));
	}

	private Mono<RateLimitDecision> admit(Mono<RateLimitDecision> check, Duration maxWait, long deadline,
			Consumer<RateLimitDecision> onAdmitted) {
		List<RateLimitDecision> earlier = admitted();
		return check.flatMap((decision) -> {
			if (decision.allowed()) {
				onAdmitted.accept(RateLimitDecision.merge(admitted()));
				return Mono.just(decision);
			}
			long wait = decision.retryAfter().toNanos();
			if (maxWait.isZero() || wait <= 0 || System.nanoTime() + wait - deadline > 0) {
				return Mono.error(new RateLimitExceededException(RateLimitDecision.mergeDenied(earlier, decision)));
			}
			return Mono.delay(Duration.ofNanos(wait))
				.then(Mono.defer(() -> admit(check, maxWait, deadline, onAdmitted)));
		});
	}

	/**
	 * {@link #admit(RateLimitEnforcer, RequestContext, List, Method, Object[], Consumer) Admits} a check, the calling
	 * thread waiting for its decision (the servlet side): the denial, or null when admitted. The same outcome as
	 * that admission, without the Reactor operators a blocked thread does not need (none at all for a decision the
	 * limiter makes at once: a leased slice's spend).
	 */
	public @Nullable RateLimitExceededException awaitAdmission(RateLimitEnforcer enforcer, RequestContext request,
			List<RateLimitEnforcer.Target> targets, @Nullable Method method, @Nullable Object @Nullable [] args,
			Consumer<RateLimitDecision> onAdmitted) {
		List<RateLimitDecision> earlier = admitted();
		RateLimitEnforcer.Resolved resolved = enforcer.resolve(request, targets, method, args);
		RateLimitDecision decision = resolved.atOnce();
		if (decision != null) {
			Waits.awaitRelease(record(decision));
		}
		else {
			decision = Waits.await(check(resolved.async()));
			if (decision == null) {
				return null; // no decision (never from the enforcer): as the admission's Mono, nothing refused
			}
		}
		return settle(decision, earlier, onAdmitted);
	}

	private static Mono<RateLimitDecision> uncancellable(Mono<RateLimitDecision> check) {
		return Mono.create((sink) -> {
			AtomicBoolean settled = new AtomicBoolean();
			sink.onCancel(() -> settled.set(true));
			// the caller's context (the parent observation) goes with the check
			check.contextWrite(sink.contextView()).subscribe((decision) -> {
				if (settled.compareAndSet(false, true)) {
					sink.success(decision);
				}
				else {
					release(decision.permit()).subscribe();
				}
			}, (error) -> {
				if (settled.compareAndSet(false, true)) {
					sink.error(error);
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("Rate-limit check of a cancelled request failed", error);
				}
			});
		});
	}

	/** Records a decision and holds its permit (once closed, releases it instead); completes once held or released. */
	public Mono<Void> record(RateLimitDecision decision) {
		return recorded(decision) ? Mono.empty() : release(decision.permit());
	}

	/** Records a decision and holds its permit, unless closed: then false, nothing recorded, the permit to release. */
	private synchronized boolean recorded(RateLimitDecision decision) {
		if (!held(decision.permit())) {
			return false;
		}
		this.decisions.add(decision);
		return true;
	}

	/** Holds a permit until {@link #close()} (once closed, releases it instead); completes once held or released. */
	public Mono<Void> hold(Permit permit) {
		return held(permit) ? Mono.empty() : release(permit);
	}

	/** Holds a permit unless closed: then false, nothing held, the permit to release. */
	private synchronized boolean held(Permit permit) {
		if (this.closed) {
			return false;
		}
		if (permit.holdsAny()) {
			this.permits.add(permit);
		}
		return true;
	}

	/** A snapshot of the decisions made so far, admitted or not. */
	public List<RateLimitDecision> decisions() {
		return List.copyOf(this.decisions);
	}

	/** A snapshot of the admitted decisions: what the response reports, and what a denial gives back. */
	public List<RateLimitDecision> admitted() {
		if (this.decisions.isEmpty()) {
			return List.of(); // a request's first check: asked twice per admission, nothing to copy
		}
		List<RateLimitDecision> admitted = new ArrayList<>(this.decisions.size());
		for (RateLimitDecision decision : this.decisions) {
			if (decision.allowed()) {
				admitted.add(decision);
			}
		}
		return Collections.unmodifiableList(admitted);
	}

	/** The live list of the permits held. */
	public List<Permit> permits() {
		return this.permits;
	}

	/** Whether {@link #close()} ran. */
	public synchronized boolean isClosed() {
		return this.closed;
	}

	/** Releases every permit held, once; never fails (the backend reclaims a permit after its window). */
	public Mono<Void> close() {
		List<Permit> held;
		synchronized (this) {
			if (this.closed) {
				return Mono.empty();
			}
			this.closed = true;
			if (this.permits.isEmpty()) {
				return Mono.empty(); // most requests: no concurrency policy, nothing to build per request
			}
			held = new ArrayList<>(this.permits);
		}
		return Flux.fromIterable(held).flatMap(DecisionScope::release).then();
	}

	/** Gives back what the admitted decisions took, when a later check denies the request; never fails. */
	public Mono<Void> reverseAdmitted() {
		return Flux.fromIterable(admitted())
			.flatMap((decision) -> decision.reversal().releaseAsync().onErrorResume((ex) -> {
				logger.warn("Could not give back the quota of a request denied by a later policy", ex);
				return Mono.empty();
			}))
			.then();
	}

	/** Releases one permit; never fails (a failed release is logged). */
	public static Mono<Void> release(Permit permit) {
		if (permit == Permit.NONE) {
			return Mono.empty();
		}
		return permit.releaseAsync().onErrorResume((ex) -> {
			logger.warn("Could not release a rate-limit permit; it is reclaimed after its policy's window", ex);
			return Mono.empty();
		});
	}

}
