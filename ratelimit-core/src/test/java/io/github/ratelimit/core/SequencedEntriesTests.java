package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sliding window log's and the concurrency set's members are numbers of a sequence of the key's own (kept in the
 * set as the member {@code #}, scored with the negated last number): every acquisition gets numbers of its own, the
 * sequence outlives the entries it numbered, and a release removes only its own members, once.
 */
class SequencedEntriesTests {

	private static final long T0 = Backends.Clock.T0;

	private static final long SECOND = 1_000_000L;

	private static final Algorithm[] SEQUENCED = { Algorithm.SLIDING_WINDOW_LOG, Algorithm.CONCURRENCY };

	private static RateLimitPolicy policy(Algorithm algorithm, long limit) {
		return RateLimitPolicy.builder("seq-" + algorithm.code())
			.algorithm(algorithm)
			.limit(limit)
			.window(Duration.ofSeconds(10))
			.build();
	}

	private static RateLimitRequest request(RateLimitPolicy policy, long cost, long time) {
		return RateLimitRequest.builder().add(policy, "someone", cost).at(time).build();
	}

	private static long remaining(RateLimitBackend backend, RateLimitPolicy policy, long time) {
		return backend.inspect(request(policy, 1, time)).get(0).remaining();
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void acquisitionsAtTheSameMicrosecondGetNumbersOfTheirOwnAndTheSequenceOutlivesTrims(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		RateLimitBackend backend = fixture.backend;
		for (Algorithm algorithm : SEQUENCED) {
			RateLimitPolicy policy = policy(algorithm, 10);
			long t = T0 + 5 * SECOND;
			RateLimitBackend.Acquisition first = backend.acquire(request(policy, 3, t), "first").block();
			RateLimitBackend.Acquisition second = backend.acquire(request(policy, 2, t), "second").block();
			assertThat(first.entrySequences()).as(algorithm.id()).containsExactly(1L);
			assertThat(second.entrySequences()).as(algorithm.id()).containsExactly(4L);
			assertThat(second.decisions().get(0).remaining()).isEqualTo(5);
			// a window later every entry is trimmed; the sequence goes on, and is not counted as an entry
			long later = t + 10 * SECOND + 1;
			RateLimitBackend.Acquisition third = backend.acquire(request(policy, 1, later), "third").block();
			assertThat(third.entrySequences()).as(algorithm.id()).containsExactly(6L);
			assertThat(third.decisions().get(0).remaining()).as(algorithm.id()).isEqualTo(9);
			if (kind != Backends.LOCAL) {
				assertThat(members(fixture, backend, policy)).as(algorithm.id()).containsExactly("#@-6", "6@" + later);
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aDeniedAcquisitionTakesNoNumbers(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : SEQUENCED) {
			RateLimitPolicy policy = policy(algorithm, 2);
			long t = T0 + 5 * SECOND;
			assertThat(backend.acquire(request(policy, 2, t), "full").block().entrySequences()).containsExactly(1L);
			RateLimitBackend.Acquisition denied = backend.acquire(request(policy, 1, t), "denied").block();
			assertThat(denied.decisions().get(0).allowed()).isFalse();
			assertThat(denied.entrySequences()).as(algorithm.id()).containsExactly(0L);
			// a release of nothing gives nothing
			backend.release(request(policy, 1, t).entries(), "denied", denied.entryTimesMicros(),
					denied.entrySequences()).block();
			assertThat(remaining(backend, policy, t)).as(algorithm.id()).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aReleaseRemovesItsOwnMembersOnlyAndOnlyOnce(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : SEQUENCED) {
			RateLimitPolicy policy = policy(algorithm, 10);
			long t = T0 + 5 * SECOND;
			RateLimitBackend.Acquisition a = backend.acquire(request(policy, 2, t), "a").block();
			RateLimitBackend.Acquisition b = backend.acquire(request(policy, 3, t), "b").block();
			RateLimitBackend.Acquisition c = backend.acquire(request(policy, 1, t + 1), "c").block();
			// b's release is sent, its answer lost, and it is sent again
			List<RateLimitRequest.Entry> entries = request(policy, 3, t).entries();
			backend.release(entries, "b", b.entryTimesMicros(), b.entrySequences()).block();
			backend.release(entries, "b", b.entryTimesMicros(), b.entrySequences()).block();
			assertThat(remaining(backend, policy, t + 2)).as("%s: only b's 3 came back", algorithm.id()).isEqualTo(7);
			// a release that names another time than its acquisition's removes nothing
			backend.release(request(policy, 2, t).entries(), "a", List.of(t + 1), a.entrySequences()).block();
			assertThat(remaining(backend, policy, t + 2)).as(algorithm.id()).isEqualTo(7);
			backend.release(request(policy, 2, t).entries(), "a", a.entryTimesMicros(), a.entrySequences()).block();
			backend.release(request(policy, 1, t + 1).entries(), "c", c.entryTimesMicros(), c.entrySequences()).block();
			assertThat(remaining(backend, policy, t + 2)).as(algorithm.id()).isEqualTo(10);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void aReleaseFromBeforeAResetNeverRemovesTheMembersOfTheKeysNextLife(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		for (Algorithm algorithm : SEQUENCED) {
			RateLimitPolicy policy = policy(algorithm, 10);
			long t = T0 + 5 * SECOND;
			RateLimitBackend.Acquisition old = backend.acquire(request(policy, 2, t), "old").block();
			backend.reset(request(policy, 1, t).entries());
			RateLimitBackend.Acquisition fresh = backend.acquire(request(policy, 2, t + 1), "fresh").block();
			assertThat(fresh.entrySequences()).as("the numbers start again").isEqualTo(old.entrySequences());
			backend.release(request(policy, 2, t).entries(), "old", old.entryTimesMicros(), old.entrySequences()).block();
			assertThat(remaining(backend, policy, t + 2)).as("%s: the fresh request still holds its 2", algorithm.id())
				.isEqualTo(8);
		}
	}

	@ParameterizedTest
	@EnumSource(Backends.class)
	void theEntryCapHoldsWithTheSequenceInTheSet(Backends kind) {
		RateLimitBackend backend = kind.fresh().backend;
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, RateLimitPolicy.MAX_ENTRY_LIMIT);
		long t = T0 + 5 * SECOND;
		RateLimitBackend.Acquisition all = backend.acquire(request(policy, RateLimitPolicy.MAX_ENTRY_LIMIT, t), "all").block();
		assertThat(all.decisions().get(0).allowed()).isTrue();
		assertThat(all.decisions().get(0).remaining()).isZero();
		assertThat(backend.acquire(request(policy, 1, t), "one more").block().decisions().get(0).allowed()).isFalse();
		backend.release(request(policy, RateLimitPolicy.MAX_ENTRY_LIMIT, t).entries(), "all", all.entryTimesMicros(),
				all.entrySequences()).block();
		RateLimitBackend.Acquisition again = backend.acquire(request(policy, RateLimitPolicy.MAX_ENTRY_LIMIT, t),
				"again").block();
		assertThat(again.decisions().get(0).allowed()).isTrue();
		assertThat(again.entrySequences()).containsExactly((long) RateLimitPolicy.MAX_ENTRY_LIMIT + 1);
	}

	/** The key's members with their scores, in Redis' order. */
	private static List<String> members(Backends.Fixture fixture, RateLimitBackend backend, RateLimitPolicy policy) {
		String key = ((io.github.ratelimit.core.redis.RedisRateLimitBackend) backend).key(policy, "someone");
		List<String> members = new ArrayList<>();
		for (TypedTuple<String> tuple : fixture.redis().opsForZSet().rangeWithScores(key, 0, -1)) {
			members.add(tuple.getValue() + "@" + Math.round(tuple.getScore()));
		}
		return members;
	}

}
