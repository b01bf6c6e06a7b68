package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import org.greenbytes.http.sfv.ByteSequenceItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.Parser;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTests {

	private static final RateLimitPolicy PER_MINUTE = RateLimitPolicy.builder("per-minute")
		.algorithm(Algorithm.FIXED_WINDOW)
		.limit(100)
		.window(Duration.ofMinutes(1))
		.build();

	private static final RateLimitPolicy BURST = RateLimitPolicy.builder("burst")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.limit(10)
		.window(Duration.ofMillis(1500))
		.build();

	private static final long NOW = 1_800_000_000_123L;

	private static PolicyDecision decision(RateLimitPolicy policy, boolean allowed, long remaining, Duration reset,
			Duration retry) {
		return new PolicyDecision(policy, "client", allowed, remaining, reset, retry);
	}

	@Test
	void allowedRequestCarriesTheMostRestrictivePolicyAndEveryPolicyInStructuredFields() {
		RateLimitDecision decision = new RateLimitDecision(List.of(
				decision(PER_MINUTE, true, 42, Duration.ofMillis(30_200), Duration.ZERO),
				decision(BURST, true, 3, Duration.ofMillis(800), Duration.ZERO)), Permit.NONE);
		HttpHeaders headers = RateLimitHeaders.ALL.of(decision, NOW);
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("1800000001"); // 1 800 000 000.923 rounded up
		assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"per-minute\";q=100;w=60, \"burst\";q=10;w=2");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"per-minute\";r=42;t=31, \"burst\";r=3;t=1");
		assertThat(headers.containsHeader("Retry-After")).isFalse();
	}

	@Test
	void deniedRequestGetsRetryAfterNeverEarlierThanAnyDenyingPolicysT() {
		RateLimitDecision decision = new RateLimitDecision(List.of(
				decision(PER_MINUTE, true, 42, Duration.ofSeconds(30), Duration.ZERO),
				decision(BURST, false, 0, Duration.ofMillis(1500), Duration.ofMillis(150))), Permit.NONE);
		HttpHeaders headers = RateLimitHeaders.ALL.of(decision, NOW);
		assertThat(headers.getFirst("Retry-After")).isEqualTo("1");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"per-minute\";r=42;t=30, \"burst\";r=0;t=1");
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		// when the denying policy is full again (1.5 s), not when it admits: it never moves backwards
		assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("1800000002");
	}

	@Test
	void headerGroupsCanBeSwitchedOff() {
		RateLimitDecision decision = new RateLimitDecision(
				List.of(decision(BURST, false, 0, Duration.ofSeconds(1), Duration.ofMillis(2100))), Permit.NONE);
		assertThat(new RateLimitHeaders(false, true, true).of(decision, NOW).headerNames())
			.containsExactlyInAnyOrder("RateLimit-Policy", "RateLimit", "Retry-After");
		assertThat(new RateLimitHeaders(true, false, false).of(decision, NOW).headerNames())
			.containsExactlyInAnyOrder("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
		assertThat(RateLimitHeaders.ALL.of(decision, NOW).getFirst("Retry-After")).isEqualTo("3");
	}

	@Test
	void aDenyingPolicyNeverReportsQuotaLeftAndResetIsWhenTheQuotaIsFull() {
		// a sliding-window log denied by its minimum interval with 8 of 10 left
		RateLimitPolicy log = RateLimitPolicy.builder("log")
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.minInterval(Duration.ofSeconds(2))
			.build();
		RateLimitDecision admitted = new RateLimitDecision(
				List.of(decision(log, true, 8, Duration.ofMillis(59_000), Duration.ZERO)), Permit.NONE);
		RateLimitDecision denied = new RateLimitDecision(
				List.of(decision(log, false, 8, Duration.ofMillis(58_500), Duration.ofMillis(1500))), Permit.NONE);
		HttpHeaders first = RateLimitHeaders.ALL.of(admitted, NOW);
		HttpHeaders second = RateLimitHeaders.ALL.of(denied, NOW + 500);
		assertThat(second.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(second.getFirst("RateLimit")).isEqualTo("\"log\";r=0;t=2");
		assertThat(Long.parseLong(second.getFirst("Retry-After"))).isGreaterThanOrEqualTo(2);
		assertThat(second.getFirst("X-RateLimit-Reset")).as("the same instant: the quota is full again then")
			.isEqualTo(first.getFirst("X-RateLimit-Reset"));
	}

	@Test
	void everyFormIsAValidStructuredFieldList() {
		RateLimitPolicy concurrency = RateLimitPolicy.builder("in-flight")
			.algorithm(Algorithm.CONCURRENCY)
			.limit(4)
			.window(Duration.ofMinutes(1))
			.build();
		RateLimitDecision decision = new RateLimitDecision(List.of(
				decision(PER_MINUTE, true, 42, Duration.ofSeconds(30), Duration.ZERO),
				decision(concurrency, false, 0, Duration.ofSeconds(60), Duration.ofMillis(100))), Permit.NONE);
		for (RateLimitHeaders headers : List.of(RateLimitHeaders.ALL,
				new RateLimitHeaders(true, true, true, "a shared secret"))) {
			HttpHeaders written = headers.of(decision, NOW);
			OuterList policies = Parser.parseList(written.getFirst("RateLimit-Policy"));
			OuterList limits = Parser.parseList(written.getFirst("RateLimit"));
			assertThat(policies.get()).hasSize(2);
			assertThat(limits.get()).hasSize(2);
			Parameters perMinute = ((Item<?>) policies.get().get(0)).getParams();
			Parameters inFlight = ((Item<?>) policies.get().get(1)).getParams();
			assertThat(((Item<?>) policies.get().get(0)).get()).isEqualTo("per-minute");
			assertThat(perMinute.get("q").get()).isEqualTo(100L);
			assertThat(perMinute.get("w").get()).isEqualTo(60L);
			assertThat(inFlight.get("qu").get()).isEqualTo("concurrent-requests");
			assertThat(inFlight).doesNotContainKey("w");
			Parameters inFlightNow = ((Item<?>) limits.get().get(1)).getParams();
			assertThat(inFlightNow.get("r").get()).isEqualTo(0L);
			assertThat(inFlightNow.get("t").get()).isEqualTo(1L);
			if (headers.partitionKeySecret() != null) {
				assertThat(inFlight.get("pk")).isInstanceOf(ByteSequenceItem.class);
				assertThat(inFlightNow.get("pk").serialize()).as("one partition key on both fields")
					.isEqualTo(inFlight.get("pk").serialize());
				assertThat(((ByteSequenceItem) inFlight.get("pk")).get().remaining()).isEqualTo(12);
				assertThat(written.getFirst("RateLimit")).as("never the identity itself").doesNotContain("client");
			}
			else {
				assertThat(inFlight).doesNotContainKey("pk");
			}
		}
	}

	@Test
	void partitionKeysDifferPerIdentityAndSecret() {
		RateLimitDecision alice = new RateLimitDecision(
				List.of(new PolicyDecision(BURST, "principal:alice", true, 3, Duration.ofSeconds(1), Duration.ZERO)),
				Permit.NONE);
		RateLimitDecision bob = new RateLimitDecision(
				List.of(new PolicyDecision(BURST, "principal:bob", true, 3, Duration.ofSeconds(1), Duration.ZERO)),
				Permit.NONE);
		RateLimitHeaders one = new RateLimitHeaders(false, true, false, "one");
		RateLimitHeaders two = new RateLimitHeaders(false, true, false, "two");
		assertThat(one.of(alice, NOW).getFirst("RateLimit")).isEqualTo(one.of(alice, NOW + 1).getFirst("RateLimit"))
			.isNotEqualTo(one.of(bob, NOW).getFirst("RateLimit"))
			.isNotEqualTo(two.of(alice, NOW).getFirst("RateLimit"));
	}

	@Test
	void partitionKeysAreTheTruncatedHmacOfTheIdentityFromEveryThread() throws Exception {
		RateLimitHeaders headers = new RateLimitHeaders(false, true, false, "s3cret");
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<List<String>>> mismatches = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int thread = t;
				mismatches.add(threads.submit(() -> {
					List<String> wrong = new ArrayList<>();
					for (int i = 0; i < 2000; i++) {
						String identity = "principal:" + thread + "-" + i;
						String value = headers.of(new RateLimitDecision(List.of(
								new PolicyDecision(BURST, identity, true, 3, Duration.ofSeconds(1), Duration.ZERO)),
								Permit.NONE), NOW).getFirst("RateLimit");
						if (!value.endsWith(";pk=" + expectedPartitionKey("s3cret", identity))) {
							wrong.add(identity + " -> " + value);
						}
					}
					return wrong;
				}));
			}
			for (Future<List<String>> wrong : mismatches) {
				assertThat(wrong.get()).isEmpty();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	/** Computed here on a fresh HMAC, as the header's definition says: the first 12 bytes, as a Byte Sequence. */
	private static String expectedPartitionKey(String secret, String identity) throws Exception {
		Mac mac = Mac.getInstance("HmacSHA256");
		mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
		byte[] hash = mac.doFinal(identity.getBytes(StandardCharsets.UTF_8));
		return ':' + Base64.getEncoder().encodeToString(Arrays.copyOf(hash, 12)) + ':';
	}

	@Test
	void noPolicyNoHeaders() {
		assertThat(RateLimitHeaders.ALL.of(new RateLimitDecision(List.of(), Permit.NONE), NOW).isEmpty()).isTrue();
	}

}
