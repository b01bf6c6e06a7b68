package io.github.ratelimit.it.webflux;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * BlockHound watches every test of this module ({@link WebfluxIntegrationTestSupport}); this shows that it is active
 * and runs the rate-limited paths once more on purpose, on the Redis backend.
 */
class BlockHoundIntegrationTests extends WebfluxIntegrationTestSupport {

	@Autowired
	RateLimitBackend backend;

	@Test
	void blockHoundDetectsASleepOnANonBlockingThread() {
		Throwable error = catchThrowable(() -> Mono.fromCallable(() -> {
			Thread.sleep(1);
			return "slept";
		}).subscribeOn(Schedulers.parallel()).block());
		assertThat(error).hasRootCauseInstanceOf(BlockingOperationError.class);
		assertThat(BlockingCalls.drain()).singleElement().asString().startsWith("java.lang.Thread.sleep");
	}

	@Test
	void blockHoundDetectsASleepOnTheServersEventLoop() {
		assertThat(get("/blocking/sleep", "sleepy").statusCode()).isEqualTo(500);
		assertThat(BlockingCalls.drain()).singleElement()
			.asString()
			.startsWith("java.lang.Thread.sleep")
			.containsPattern(" on [a-z]+-http-");
	}

	@Test
	void rateLimitedRequestsOnRedisNeverBlock() {
		assertThat(this.backend).isInstanceOf(RedisRateLimitBackend.class);
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		String[] paths = { "/api/hello", "/tenants/t/mono", "/tenants/t/flux", "/tenants/t/assembled-twice",
				"/combined/t", "/slot/ok", "/slot/sse-finite", "/slot/error", "/short/hello" };
		for (int round = 0; round < 4; round++) {
			for (String path : paths) {
				String client = "client-" + round;
				responses.add(CompletableFuture.supplyAsync(() -> get(path, client)));
			}
		}
		List<Integer> statuses = responses.stream().map(CompletableFuture::join).map(HttpResponse::statusCode).toList();
		assertThat(statuses).isSubsetOf(200, 429, 500).contains(200, 429);
		assertThat(BlockingCalls.drain()).isEmpty();
	}

}
