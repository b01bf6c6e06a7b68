package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Requests of several entries of which some are leased ({@link LeasingBackend}): the other entries go to the backend
 * as one request first; only when it admits are the leased entries spent from their slices, one by one. When a leased
 * entry is denied the backend's part is given back; what the earlier leased entries spent stays spent (never more
 * than the limit, a little less). Releases give back the backend's part only.
 */
final class LeasedRequests {

	private final LeasingBackend leasing;

	LeasedRequests(LeasingBackend leasing) {
		this.leasing = leasing;
	}

	Mono<Acquisition> acquire(RateLimitRequest request, String requestId) {
		List<Entry> rest = request.entries().stream().filter((entry) -> !this.leasing.leased(entry)).toList();
		if (rest.isEmpty()) {
			return spendLeased(request, new Acquisition(List.of(), 0));
		}
		RateLimitRequest.Builder others = RateLimitRequest.builder();
		rest.forEach((entry) -> others.add(entry.policy(), entry.identity(), entry.cost()));
		return this.leasing.backend().acquire(others.build(), requestId).flatMap((acquired) -> {
			if (acquired.decisions().stream().allMatch(PolicyDecision::allowed)) {
				// when the leased part fails, what the others admitted goes back before the error does
				return spendLeased(request, acquired)
					.onErrorResume((ex) -> giveBackOthers(rest, acquired, requestId).then(Mono.error(ex)))
					.flatMap((combined) -> givenBackWhenDenied(combined, rest, acquired, requestId));
			}
			List<Acquisition> asIs = leasedEntries(request).stream()
				.map((entry) -> new Acquisition(List.of(this.leasing.asIs(entry)), acquired.timeMicros()))
				.toList();
			return Mono.just(combine(request, acquired, asIs));
		});
	}

	/** Spends the leased entries in order, stopping at the first denial (the ones after it are read as they are). */
	private Mono<Acquisition> spendLeased(RateLimitRequest request, Acquisition acquired) {
		List<Entry> leased = leasedEntries(request);
		return Flux.fromIterable(leased)
			.concatMap(this.leasing::spendOrTake)
			.takeUntil((acquisition) -> !acquisition.decisions().get(0).allowed())
			.collectList()
			.map((spent) -> {
				List<Acquisition> all = new ArrayList<>(spent);
				for (int i = spent.size(); i < leased.size(); i++) {
					all.add(new Acquisition(List.of(this.leasing.asIs(leased.get(i))), spent.get(0).timeMicros()));
				}
				return combine(request, acquired, all);
			});
	}

	private Mono<Acquisition> givenBackWhenDenied(Acquisition combined, List<Entry> rest, Acquisition acquired,
			String requestId) {
		if (combined.decisions().stream().allMatch(PolicyDecision::allowed)) {
			return Mono.just(combined);
		}
		return giveBackOthers(rest, acquired, requestId).thenReturn(combined);
	}

	private Mono<Void> giveBackOthers(List<Entry> rest, Acquisition acquired, String requestId) {
		return this.leasing.backend()
			.release(rest, requestId, acquired.entryTimesMicros(), acquired.entrySequences())
			.onErrorResume((ex) -> Mono.empty());
	}

	/** The request's decisions in its order: the backend's part (or none) and the leased entries' acquisitions. */
	private Acquisition combine(RateLimitRequest request, Acquisition acquired, List<Acquisition> leased) {
		List<PolicyDecision> decisions = new ArrayList<>();
		List<Long> times = new ArrayList<>();
		List<Long> sequences = new ArrayList<>();
		int other = 0;
		int lease = 0;
		for (Entry entry : request.entries()) {
			if (this.leasing.leased(entry)) {
				Acquisition spent = leased.get(lease++);
				decisions.add(spent.decisions().get(0));
				times.add(spent.timeMicros());
				sequences.add(spent.entrySequences().get(0));
			}
			else {
				decisions.add(acquired.decisions().get(other));
				times.add(acquired.entryTimesMicros().get(other));
				sequences.add(acquired.entrySequences().get(other++));
			}
		}
		return new Acquisition(decisions, times.get(0), times, sequences, acquired.failedGiveBacks(), 0);
	}

	private List<Entry> leasedEntries(RateLimitRequest request) {
		return request.entries().stream().filter(this.leasing::leased).toList();
	}

	/** Gives back the entries that are not leased; a leased one's cost goes back into its slice if still exact. */
	Mono<Void> release(List<Entry> entries, String requestId, List<Long> acquiredAtMicros, List<Long> sequences) {
		List<Entry> rest = new ArrayList<>();
		List<Long> times = new ArrayList<>();
		List<Long> restSequences = new ArrayList<>();
		for (int i = 0; i < entries.size(); i++) {
			if (this.leasing.leased(entries.get(i))) {
				this.leasing.putBack(entries.get(i), sequences.get(i));
			}
			else {
				rest.add(entries.get(i));
				times.add(acquiredAtMicros.get(i));
				restSequences.add(sequences.get(i));
			}
		}
		return rest.isEmpty() ? Mono.empty()
				: this.leasing.backend().release(rest, requestId, times, restSequences);
	}

}
