package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** What a request's builder makes of its entries: one, several in order, the same twice, a name used twice. */
class RateLimitRequestTests {

	private static final RateLimitPolicy API = RateLimitPolicy.builder("api")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(100)
		.window(Duration.ofMinutes(1))
		.build();

	private static final RateLimitPolicy LOGIN = RateLimitPolicy.builder("login")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(5)
		.window(Duration.ofMinutes(1))
		.build();

	@Test
	void noEntryAndOneEntry() {
		assertThat(RateLimitRequest.builder().build().entries()).isEmpty();
		assertThat(RateLimitRequest.builder().add(API, "alice", 3).build().entries())
			.containsExactly(new RateLimitRequest.Entry(API, "alice", 3));
	}

	@Test
	void entriesKeepTheOrderTheyWereAddedIn() {
		RateLimitRequest request = RateLimitRequest.builder()
			.add(LOGIN, "alice")
			.add(API, "alice")
			.add(API, "bob")
			.build();
		assertThat(request.entries()).extracting((entry) -> entry.policy().name() + ":" + entry.identity())
			.containsExactly("login:alice", "api:alice", "api:bob");
	}

	@Test
	void theSamePolicyAndIdentityTwiceCountsOnceAtTheHigherCostWhereverItComes() {
		assertThat(RateLimitRequest.builder().add(API, "alice", 2).add(API, "alice", 5).build().entries())
			.containsExactly(new RateLimitRequest.Entry(API, "alice", 5));
		assertThat(RateLimitRequest.builder().add(API, "alice", 5).add(API, "alice", 2).build().entries())
			.containsExactly(new RateLimitRequest.Entry(API, "alice", 5));
		assertThat(RateLimitRequest.builder()
			.add(API, "alice", 2)
			.add(LOGIN, "alice")
			.add(API, "alice", 4)
			.build()
			.entries()).containsExactly(new RateLimitRequest.Entry(API, "alice", 4),
					new RateLimitRequest.Entry(LOGIN, "alice", 1));
	}

	@Test
	void twoDifferentPoliciesOfOneNameAreRefusedAsFirstAndSecondEntryAlike() {
		RateLimitPolicy otherApi = API.toBuilder().limit(7).build();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitRequest.builder().add(API, "alice").add(otherApi, "alice"))
			.withMessageContaining("Two different policies named 'api'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitRequest.builder().add(LOGIN, "x").add(API, "alice").add(otherApi, "alice"))
			.withMessageContaining("Two different policies named 'api'");
	}

	@Test
	void aCostOutOfRangeIsRefusedNamingThePolicy() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitRequest.builder().add(LOGIN, "alice", 6))
			.withMessageContaining("policy 'login'")
			.withMessageContaining("between 1 and 5");
	}

}
