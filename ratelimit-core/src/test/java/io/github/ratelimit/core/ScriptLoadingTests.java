package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisConnection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scripts run by EVALSHA and are loaded again when the server has lost them (restart, failover, SCRIPT FLUSH).
 */
class ScriptLoadingTests {

	static List<Backends> redisKinds() {
		return Backends.redis();
	}

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("reload")
		.algorithm(Algorithm.GCRA)
		.limit(3)
		.window(Duration.ofMinutes(1))
		.build();

	@ParameterizedTest
	@MethodSource("redisKinds")
	void scriptsAreReloadedAfterScriptFlush(Backends kind) {
		Backends.Fixture fixture = kind.fresh();
		assertThat(fixture.limiter.check(RateLimitRequest.of(POLICY, "reload-client")).allowed()).isTrue();
		flushScripts(fixture);
		assertThat(fixture.limiter.check(RateLimitRequest.of(POLICY, "reload-client")).decisions().get(0).remaining())
			.isEqualTo(1);
		flushScripts(fixture);
		RateLimitDecision async = fixture.limiter.checkAsync(RateLimitRequest.of(POLICY, "reload-client"))
			.block(Duration.ofSeconds(10));
		assertThat(async.decisions().get(0).remaining()).isZero();
	}

	private static void flushScripts(Backends.Fixture fixture) {
		if (fixture.kind == Backends.REDIS_CLUSTER) {
			try (RedisConnection connection = fixture.factory().getClusterConnection()) {
				// on a cluster connection SCRIPT FLUSH goes to every node
				connection.scriptingCommands().scriptFlush();
			}
		}
		else {
			try (RedisConnection connection = fixture.factory().getConnection()) {
				connection.scriptingCommands().scriptFlush();
				assertThat(connection.scriptingCommands()
					.scriptExists("0000000000000000000000000000000000000000")).containsExactly(false);
			}
		}
	}

}
