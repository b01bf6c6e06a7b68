package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Signal;

/**
 * A request's shadow entries and the others, decided apart at the same time, so that a shadow policy never changes
 * what the others decide; when the others deny, what the shadow policies took is given back.
 */
record ShadowSplit(RateLimitRequest enforced, RateLimitRequest shadow) {

	/** The split, or null when the entries are all of one kind (nothing to split). */
	static @Nullable ShadowSplit of(RateLimitRequest request) {
		RateLimitRequest shadow = request.part((entry) -> entry.policy().shadow());
		if (shadow == null || shadow == request) {
			return null;
		}
		return new ShadowSplit(Objects.requireNonNull(request.part((entry) -> !entry.policy().shadow())), shadow);
	}

	/**
	 * Decides both parts at the same time. A part decided while the other fails, or before the caller cancels, is
	 * never seen by the caller: what it took is given back.
	 */
	Mono<RateLimitDecision> decide(Decider decider, ErrorCounts errors) {
		// each part's outcome as a signal: a part that fails (unguarded) waits for the other, which is given back
		return Mono.zip(decider.decide(this.enforced).materialize(), decider.decide(this.shadow).materialize())
			.flatMap((both) -> combine(both.getT1(), both.getT2(), errors))
			.doOnDiscard(Signal.class, (unseen) -> {
				if (unseen.get() instanceof RateLimitDecision decision) {
					Acquired.giveBackAll(decision, errors);
				}
			});
	}

	private static Mono<RateLimitDecision> combine(Signal<RateLimitDecision> enforced, Signal<RateLimitDecision> shadow,
			ErrorCounts errors) {
		Throwable failure = (enforced.getThrowable() != null) ? enforced.getThrowable() : shadow.getThrowable();
		if (failure == null) {
			return Mono.just(combine(Objects.requireNonNull(enforced.get()), Objects.requireNonNull(shadow.get()),
					errors));
		}
		for (Signal<RateLimitDecision> part : List.of(enforced, shadow)) {
			if (part.get() != null) {
				Acquired.giveBackAll(part.get(), errors);
			}
		}
		return Mono.error(failure);
	}

	/** The decision of both parts: the admission and the reversal of the enforced part, plus the shadow's. */
	private static RateLimitDecision combine(RateLimitDecision enforced, RateLimitDecision shadow,
			ErrorCounts errors) {
		List<PolicyDecision> all = new ArrayList<>(enforced.allDecisions());
		all.addAll(shadow.allDecisions());
		Throwable failure = enforced.failure().or(shadow::failure).orElse(null);
		if (!enforced.allowed()) {
			Acquired.giveBackAll(shadow, errors);
			return RateLimitDecision.withoutPermits(all, failure);
		}
		return new RateLimitDecision(all, PermitPair.of(enforced.permit(), shadow.permit()),
				PermitPair.of(enforced.reversal(), shadow.reversal()), () -> {
					List<PolicyDecision> reversed = new ArrayList<>(enforced.reversed().allDecisions());
					reversed.addAll(shadow.reversed().allDecisions());
					return reversed;
				}, failure);
	}

}
