package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency permits (one request in flight per client) are held while a request is in flight and released when
 * its response completes, whichever way it completes. {@code /inflight/**} takes its permit in a
 * {@code @RateLimited} class ({@code single}), {@code /inflight-rule/**} in the filter ({@code single-rule}).
 * <p>
 * The response reaches the client a moment before the server has released the permit (the release follows the
 * response), so "the next one is admitted" waits, bounded, for the first admission rather than expecting it at once.
 */
class ConcurrencyPermitIntegrationTests extends IntegrationTestSupport {

	private static final String PROBE = "/inflight/sync";

	private static final String RULE_PROBE = "/inflight-rule/sync";

	@Autowired
	Gate gate;

	@AfterEach
	void openGate() {
		this.gate.open();
	}

	@Test
	void normalReturn() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/sync", 200, "sync", PROBE);
	}

	@Test
	void responseEntity() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/entity", 200, "entity", PROBE);
	}

	@Test
	void exceptionThrownByTheHandler() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/fail", 500, null, PROBE);
	}

	@Test
	void callable() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/callable", 200, "callable", PROBE);
	}

	@Test
	void deferredResultCompletedFromAnotherThread() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/deferred", 200, "deferred", PROBE);
	}

	@Test
	void deferredResultThatTimesOut() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/deferred-timeout", 503, null, PROBE);
	}

	@Test
	void serverSentEvents() throws Exception {
		HttpResponse<String> response = assertHeldWhileInFlightThenReleased("/inflight/sse", 200, null, PROBE);
		assertThat(response.body()).isEqualTo("event:tick\ndata:one\n\nevent:tick\ndata:two\n\n");
	}

	@Test
	void streamingResponseBody() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight/streaming", 200, "chunk one\nchunk two\n", PROBE);
	}

	@Test
	void filterRuleNormalReturn() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight-rule/sync", 200, "sync", RULE_PROBE);
	}

	@Test
	void filterRuleDeferredResult() throws Exception {
		assertHeldWhileInFlightThenReleased("/inflight-rule/deferred", 200, "deferred", RULE_PROBE);
	}

	@Test
	void everyCompletedRequestLeavesNoPermitBehind() throws Exception {
		for (String path : new String[] { "/inflight/sync", "/inflight/fail", "/inflight/callable",
				"/inflight/deferred", "/inflight/sse", "/inflight/streaming" }) {
			this.http.get(path);
			Permits.awaitAdmitted(this.http, PROBE);
		}
		Permits.awaitNoneHeld();
		assertThat(Permits.held("rl:{ip:127.0.0.1}:single:c2")).isZero();
	}

	private HttpResponse<String> assertHeldWhileInFlightThenReleased(String path, int status, String body,
			String probe) throws Exception {
		this.gate.arm();
		CompletableFuture<HttpResponse<String>> inFlight = this.http.getAsync(path);
		this.gate.awaitEntered();
		HttpResponse<String> second = this.http.get(probe);
		assertThat(second.statusCode()).as("second request while %s is in flight", path).isEqualTo(429);
		assertThat(second.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		this.gate.open();
		HttpResponse<String> completed = inFlight.get(30, TimeUnit.SECONDS);
		assertThat(completed.statusCode()).as(path).isEqualTo(status);
		if (body != null) {
			assertThat(completed.body()).isEqualTo(body);
		}
		Permits.awaitAdmitted(this.http, probe);
		return completed;
	}

}
