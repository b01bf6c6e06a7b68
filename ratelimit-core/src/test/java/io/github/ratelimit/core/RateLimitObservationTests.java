package io.github.ratelimit.core;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Each decision observed as {@code ratelimit.decision}, against a real Redis and a port nobody listens on: the
 * backend and the outcome as low-cardinality key values, never the identity; the errors by kind and the permits in
 * flight the limiter counts for meters.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RateLimitObservationTests {

	private static final String IDENTITY = "user-4711@example.com";

	// a sliding window log: a fixed window's boundary (each whole minute) between an admission and the denial
	// expected after it would refill it
	private static final RateLimitPolicy ONE = RateLimitPolicy.builder("one")
		.algorithm(Algorithm.SLIDING_WINDOW_LOG)
		.limit(1)
		.window(Duration.ofMinutes(1))
		.build();

	private static final RateLimitPolicy PERMITS = RateLimitPolicy.builder("permits")
		.algorithm(Algorithm.CONCURRENCY)
		.limit(3)
		.window(Duration.ofMinutes(1))
		.build();

	private final TestObservationRegistry observations = TestObservationRegistry.create();

	private RedisServer redis;

	private LettuceConnectionFactory factory;

	@AfterEach
	void stop() {
		if (this.factory != null) {
			this.factory.destroy();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@ParameterizedTest
	@EnumSource(GuardedRateLimiterTests.Path.class)
	void anAdmissionAndADenialAreObservedWithBackendAndOutcome(GuardedRateLimiterTests.Path path) {
		DefaultRateLimiter limiter = guarded(redisPort());
		assertThat(path.check(limiter, request(ONE)).allowed()).isTrue();
		assertThat(path.check(limiter, request(ONE)).allowed()).isFalse();
		TestObservationRegistryAssert.assertThat(this.observations)
			.hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 2)
			.hasHandledContextsThatSatisfy((contexts) -> {
				assertThat(contexts).map(RateLimitObservationTests::outcome).containsExactly("allowed", "denied");
				assertThat(contexts).allSatisfy((context) -> {
					assertThat(context.getLowCardinalityKeyValue("backend").getValue()).isEqualTo("redis");
					assertThat(context.getContextualName()).isEqualTo("ratelimit decision");
					assertThat(context.getError()).isNull();
					assertNoIdentity(context);
					RateLimitObservationContext ours = (RateLimitObservationContext) context;
					assertThat(ours.policies()).containsExactly(ONE);
					assertThat(ours.decision()).isNotNull();
				});
			});
	}

	@ParameterizedTest
	@EnumSource(GuardedRateLimiterTests.Path.class)
	void decisionsOfTheFailureModesAreObservedWithTheirOutcome(GuardedRateLimiterTests.Path path) throws IOException {
		RateLimitPolicy open = policy("open", FailureMode.OPEN);
		RateLimitPolicy closed = policy("closed", FailureMode.CLOSED);
		RateLimitPolicy local = policy("local", FailureMode.LOCAL);
		DefaultRateLimiter limiter = guarded(closedPort());
		path.check(limiter, request(open));
		path.check(limiter, request(local));
		path.check(limiter, request(open, closed));
		TestObservationRegistryAssert.assertThat(this.observations)
			.hasHandledContextsThatSatisfy((contexts) -> {
				assertThat(contexts).map(RateLimitObservationTests::outcome)
					.containsExactly("failed_open", "local_allowed", "failed_closed");
				assertThat(contexts).allSatisfy(RateLimitObservationTests::assertNoIdentity);
			});
		assertThat(limiter.errorCount(BackendErrorKind.BACKEND_ERROR) + limiter.errorCount(BackendErrorKind.TIMEOUT))
			.isEqualTo(3);
	}

	@Test
	void anUnguardedLimiterThatThrowsIsObservedAsAnError() throws IOException {
		this.factory = factory(closedPort());
		DefaultRateLimiter limiter = new DefaultRateLimiter(new RedisRateLimitBackend(this.factory),
				this.observations);
		assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> limiter.check(request(ONE)));
		assertThat(Mono.defer(() -> limiter.checkAsync(request(ONE))).onErrorReturn(
				new RateLimitDecision(List.of(), Permit.NONE)).block()).isNotNull();
		TestObservationRegistryAssert.assertThat(this.observations)
			.hasHandledContextsThatSatisfy((contexts) -> assertThat(contexts).hasSize(2).allSatisfy((context) -> {
				assertThat(outcome(context)).isEqualTo("error");
				assertThat(context.getError()).isNotNull();
				assertNoIdentity(context);
			}));
	}

	@ParameterizedTest
	@EnumSource(GuardedRateLimiterTests.Path.class)
	void permitsInFlightAreCountedUntilReleased(GuardedRateLimiterTests.Path path) {
		DefaultRateLimiter limiter = guarded(redisPort());
		RateLimitDecision first = path.check(limiter, request(PERMITS));
		RateLimitDecision second = path.check(limiter,
				RateLimitRequest.builder().add(PERMITS, "another", 2).build());
		assertThat(limiter.permitsInFlight("permits")).isEqualTo(3);
		first.permit().release();
		first.permit().release();
		assertThat(limiter.permitsInFlight("permits")).isEqualTo(2);
		second.permit().releaseAsync().block();
		assertThat(limiter.permitsInFlight("permits")).isZero();
		assertThat(limiter.permitsInFlight("one")).isZero();
	}

	@Test
	void withoutARegistryNothingIsObserved() {
		this.factory = factory(redisPort());
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(new RedisRateLimitBackend(this.factory)).build();
		assertThat(limiter.check(request(ONE)).allowed()).isTrue();
		TestObservationRegistryAssert.assertThat(this.observations).doesNotHaveAnyObservation();
	}

	private static String outcome(Observation.Context context) {
		return context.getLowCardinalityKeyValue("outcome").getValue();
	}

	/** No key value, low or high cardinality, carries the identity. */
	private static void assertNoIdentity(Observation.Context context) {
		assertThat(context.getAllKeyValues()).map(KeyValue::getValue).noneMatch((value) -> value.contains("4711"));
		assertThat(context.getAllKeyValues()).map(KeyValue::getKey).containsOnly("backend", "outcome");
	}

	private static RateLimitRequest request(RateLimitPolicy... policies) {
		RateLimitRequest.Builder builder = RateLimitRequest.builder();
		for (RateLimitPolicy policy : policies) {
			builder.add(policy, IDENTITY, 1);
		}
		return builder.build();
	}

	private static RateLimitPolicy policy(String name, FailureMode failureMode) {
		return RateLimitPolicy.builder(name)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.failureMode(failureMode)
			.build();
	}

	private DefaultRateLimiter guarded(int port) {
		this.factory = factory(port);
		return DefaultRateLimiter.builder(new RedisRateLimitBackend(this.factory))
			.timeout(Duration.ofSeconds(2))
			.observationRegistry(this.observations)
			.build();
	}

	private int redisPort() {
		this.redis = RedisServer.start();
		return this.redis.port();
	}

	/** A loopback port nobody listens on: connections are refused at once. */
	private static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static LettuceConnectionFactory factory(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port), LettuceClientConfiguration.builder()
					.commandTimeout(Duration.ofSeconds(5))
					.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
