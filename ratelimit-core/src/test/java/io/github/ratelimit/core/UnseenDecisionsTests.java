package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Arrays;

import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A part of a split request (shadow and enforced policies, or the shards of a Cluster) that was decided but whose
 * decision the caller never sees, because the caller gave up or another part failed, gives back what it took. The
 * parts that answer are decided by a real (local) backend; the part that never answers, or fails, is held by the test.
 */
class UnseenDecisionsTests {

	private static final RateLimitPolicy ENFORCED = policy("enforced", false);

	private static final RateLimitPolicy SHADOW = policy("shadow", true);

	private final LocalRateLimitBackend backend = new LocalRateLimitBackend();

	private final ErrorCounts errors = new ErrorCounts();

	private final Decider local = new UnguardedBackend(this.backend, this.errors, new Acquired.PermitsInFlight());

	private static RateLimitPolicy policy(String name, boolean shadow) {
		return RateLimitPolicy.builder(name)
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(5)
			.window(Duration.ofHours(1))
			.shadow(shadow)
			.build();
	}

	private long remaining(RateLimitPolicy policy) {
		return this.backend.inspect(RateLimitRequest.of(policy, "client")).get(0).remaining();
	}

	private static RateLimitRequest both() {
		return RateLimitRequest.builder().add(ENFORCED, "client").add(SHADOW, "client").build();
	}

	@Test
	void theShadowPartDecidedBeforeTheCallerCancelsIsGivenBack() {
		ShadowSplit split = ShadowSplit.of(both());
		Decider enforcedNeverAnswers = (part) -> part.entries().get(0).policy().shadow() ? this.local.decide(part)
				: Mono.never();
		Disposable caller = split.decide(enforcedNeverAnswers, this.errors).subscribe();
		assertThat(remaining(SHADOW)).as("the shadow part took its cost").isEqualTo(4);
		caller.dispose();
		assertThat(remaining(SHADOW)).as("given back once the caller gave up").isEqualTo(5);
	}

	@Test
	void theShadowPartDecidedBeforeTheEnforcedPartFailsIsGivenBack() {
		ShadowSplit split = ShadowSplit.of(both());
		Sinks.One<RateLimitDecision> enforced = Sinks.one();
		Decider enforcedFails = (part) -> part.entries().get(0).policy().shadow() ? this.local.decide(part)
				: enforced.asMono();
		Sinks.One<Throwable> failure = Sinks.one();
		split.decide(enforcedFails, this.errors).subscribe(null, failure::tryEmitValue);
		assertThat(remaining(SHADOW)).isEqualTo(4);
		enforced.tryEmitError(new IllegalStateException("the enforced part's backend failed"));
		assertThat(failure.asMono().block()).hasMessage("the enforced part's backend failed");
		assertThat(remaining(SHADOW)).as("given back with the failure").isEqualTo(5);
	}

	@Test
	void aShardDecidedBeforeTheCallerCancelsIsGivenBack() {
		ShardSplit split = ShardSplit.of(both(), Arrays.asList("first-master", "second-master"));
		Disposable caller = split
			.decide((part) -> (part.entries().get(0).policy() == ENFORCED) ? this.local.decide(part) : Mono.never(),
					this.errors)
			.subscribe();
		assertThat(remaining(ENFORCED)).as("the first shard's part took its cost").isEqualTo(4);
		caller.dispose();
		assertThat(remaining(ENFORCED)).as("given back once the caller gave up").isEqualTo(5);
		assertThat(this.errors.count(BackendErrorKind.GIVE_BACK_FAILED)).isZero();
	}

	@Test
	void aGuardedCallAnsweredWhileSentIsGivenBackWhenTheCallerCancelsBeforeAsking() {
		// the local backend answers while the guard sends the call, as a leased slice's spend does: no budget timer
		Acquired.PermitsInFlight inFlight = new Acquired.PermitsInFlight();
		Decider guarded = new GuardedBackend(this.backend,
				new Guard(this.backend, Duration.ofSeconds(5), CircuitBreaker.ofDefaults("unseen"), this.errors),
				new FailureModes(new LocalRateLimitBackend(), Duration.ofSeconds(1), inFlight), inFlight);
		guarded.decide(RateLimitRequest.of(ENFORCED, "client")).subscribe(new BaseSubscriber<>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				cancel();
			}

		});
		assertThat(remaining(ENFORCED)).as("taken when sent, given back on the cancel").isEqualTo(5);
		assertThat(guarded.decide(RateLimitRequest.of(ENFORCED, "client")).block().allowed()).isTrue();
		assertThat(remaining(ENFORCED)).isEqualTo(4);
	}

}
