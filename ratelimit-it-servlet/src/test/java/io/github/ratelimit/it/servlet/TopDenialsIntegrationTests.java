package io.github.ratelimit.it.servlet;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.spring.RedisTopDenials;
import io.github.ratelimit.spring.TopDenials;
import io.github.ratelimit.testkit.HttpLoad;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The top limited identities ({@code GET /actuator/ratelimits/top}, {@code /actuator/ratelimits/{policy}/top}) on two
 * instances sharing one Redis. {@code /mimic} counts policy {@code per-client} per
 * {@code X-Client} header (here GCRA, 1 an hour), so every request after a client's first is refused.
 */
class TopDenialsIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	/** How long a summary may take to reach the other instance (published every 2 s); a bound, not a figure checked. */
	private static final Duration PROPAGATION = Duration.ofSeconds(30);

	private static final String HOT = "header.x-client:hot";

	/** How {@code top} shows it: a header may carry a credential, so as its digest. */
	private static final String HOT_SHOWN = RateLimitKeys.digest(HOT);

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void startInstances() {
		first = start();
		second = start();
	}

	@AfterAll
	static void stopInstances() {
		Instances.stop(first, second);
	}

	@BeforeEach
	void startFresh() {
		// every key but the count of resets: the instances have read it, and a count gone back to nothing reads as a
		// reset of everything at their next reconcile, which could empty a summary in the middle of the next test
		redis.commands().keys("*").stream().filter((key) -> !key.equals("rl:resets"))
			.forEach((key) -> redis.commands().del(key));
		first.getBean(TopDenials.class).stateReset(null, null);
		second.getBean(TopDenials.class).stateReset(null, null);
		Wait.until(PROPAGATION, () -> topOf(first).isEmpty() && topOf(second).isEmpty());
	}

	@Test
	void aHotIdentityAmongTenThousandQuietOnesIsFirstOnBothInstances() {
		int quiet = 10_000;
		int hot = 1_000;
		// request 2i and 2i+1 are quiet client i's two, on either instance (one of them is refused); then the hot one's
		List<HttpLoad.Response> responses = load(2 * quiet + hot, (n) -> (n < 2 * quiet)
				? request((n % 2 == 0) ? first : second, "quiet-" + (n / 2)) : request((n % 2 == 0) ? first : second, "hot"));
		long refused = responses.stream().filter((response) -> response.status() == 429).count();
		assertThat(responses).allSatisfy((response) -> assertThat(response.status()).isIn(200, 429));
		assertThat(refused).isGreaterThanOrEqualTo(quiet + hot - 1);
		for (ConfigurableApplicationContext instance : List.of(first, second)) {
			// every denial of every instance is counted once, the hot identity first
			Wait.until("the fleet's top on each instance", PROPAGATION,
					() -> denialsOf(instance) == refused && HOT_SHOWN.equals(topOf(instance).get(0).get("identity")));
			Map<String, Object> top = policyTop(instance);
			assertThat(top).containsEntry("instances", 2);
			Map<String, Object> first = topOf(instance).get(0);
			assertThat(((Number) first.get("denials")).longValue()).isGreaterThanOrEqualTo(hot - 1);
			assertThat(((Number) first.get("share")).doubleValue()).isGreaterThan(0.0).isLessThanOrEqualTo(1.0);
			assertThat(first).containsEntry("remaining", 0).containsKey("resetAfter");
			assertThat(topOf(instance)).hasSizeLessThanOrEqualTo(10);
			assertThat(get(instance, "/actuator/ratelimits/per-client/top").body()).doesNotContain("x-client:");
		}
		Map<String, Object> fleet = body(get(second, "/actuator/ratelimits/top"));
		assertThat(Actuator.map(fleet.get("policies"))).containsOnlyKeys("per-client");
	}

	@Test
	void aMillionDistinctIdentitiesKeepAtMostTheCapacityOfCounters() {
		TopDenials top = first.getBean(TopDenials.class);
		for (int i = 0; i < 1_000_000; i++) {
			top.record("per-client", "header.x-client:client-" + i);
		}
		// the capacity (64) per half window, two halves
		assertThat(top.counters()).isLessThanOrEqualTo(2 * 64);
		assertThat(top.summary("per-client").denials()).isEqualTo(1_000_000);
		first.getBean(RedisTopDenials.class).publish();
		Map<String, String> published = redis.commands().hgetall("rl:top:{per-client}");
		assertThat(published).hasSize(1);
		Map<String, Object> read = Actuator.read(published.values().iterator().next());
		assertThat(Actuator.map(read.get("identities"))).hasSizeLessThanOrEqualTo(64);
		assertThat(((Number) body(get(second, "/actuator/ratelimits/per-client/top")).get("denials")).longValue())
			.isEqualTo(1_000_000);
	}

	@Test
	void aResetIdentityDropsOutOfTheTopOnEveryInstanceAndAnOverrideKeepsTheCounts() {
		for (int i = 0; i < 6; i++) {
			status(first, "hot");
			status(second, "hot");
			status(second, "warm");
		}
		// hot refused 11 times (6 here, 5 there), warm 5: both instances' shares seen on both
		Wait.until(PROPAGATION, () -> denialsOf(first) == 16 && denialsOf(second) == 16);
		long hotDenials = ((Number) topOf(second).get(0).get("denials")).longValue();
		assertThat(hotDenials).isEqualTo(11);

		// an override of the policy: the counts carry on, the remaining figures are the new limit's
		assertThat(send(first, "POST", "/actuator/ratelimits/per-client", "{\"limit\": 100}").statusCode())
			.isEqualTo(200);
		Wait.until(PROPAGATION, () -> ((Number) topOf(second).get(0).get("remaining")).longValue() > 0);
		assertThat(topOf(second).get(0)).containsEntry("identity", HOT_SHOWN)
			.containsEntry("denials", (int) hotDenials);
		assertThat(send(first, "DELETE", "/actuator/ratelimits/per-client", null).statusCode()).isEqualTo(200);

		// a reset of the identity (named by its source): it drops out on both instances, the other stays
		assertThat(send(second, "DELETE", "/actuator/ratelimits/per-client/hot?source=header.x-client", null)
			.statusCode()).isEqualTo(200);
		for (ConfigurableApplicationContext instance : List.of(first, second)) {
			Wait.until("the reset identity gone on each instance", PROPAGATION, () -> topOf(instance).size() == 1);
			assertThat(topOf(instance).get(0)).containsEntry("identity",
					RateLimitKeys.digest("header.x-client:warm"));
		}
	}

	@Test
	void digestOnlyShowsNoRawIdentity() {
		ConfigurableApplicationContext digests = start("ratelimit.top.digest-only=true");
		try {
			for (int i = 0; i < 3; i++) {
				status(first, "hot");
			}
			Wait.until(PROPAGATION, () -> !topOf(digests).isEmpty());
			String top = get(digests, "/actuator/ratelimits/per-client/top").body();
			String fleet = get(digests, "/actuator/ratelimits/top").body();
			assertThat(top).contains(RateLimitKeys.digest(HOT)).doesNotContain("hot").doesNotContain("x-client");
			assertThat(fleet).contains(RateLimitKeys.digest(HOT)).doesNotContain("hot");
			assertThat(body(get(digests, "/actuator/ratelimits/top"))).containsEntry("digestOnly", true);
		}
		finally {
			digests.close();
		}
	}

	@Test
	void theUsageOfAValueNamedTopIsAskedWithItsSource() {
		status(first, "top");
		Map<String, Object> usage = body(get(first, "/actuator/ratelimits/per-client/top?source=header.x-client"));
		assertThat(usage).containsEntry("identity", "header.x-client:top").containsEntry("remaining", 0);
		assertThat(get(first, "/actuator/ratelimits/nothing").statusCode()).isEqualTo(404);
	}

	private static ConfigurableApplicationContext start(String... more) {
		String[] properties = { "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=unrestricted",
				"ratelimit.policies.per-client.limit=1",
				"ratelimit.policies.per-client.window=1h", "ratelimit.top.enabled=true", "ratelimit.top.window=10m" };
		String[] all = new String[properties.length + more.length];
		System.arraycopy(properties, 0, all, 0, properties.length);
		System.arraycopy(more, 0, all, properties.length, more.length);
		return Instances.start(redis, all);
	}

	private static List<HttpLoad.Response> load(int requests, java.util.function.LongFunction<HttpRequest> each) {
		HttpRequest extra = request(first, "hot");
		HttpLoad load = HttpLoad.startRequests(4, Duration.ofSeconds(30), (n) -> (n < requests) ? each.apply(n) : extra);
		Wait.until("the load's requests answered", Duration.ofMinutes(5), () -> load.responses().size() >= requests);
		return load.stop();
	}

	private static HttpRequest request(ConfigurableApplicationContext instance, String client) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Instances.port(instance) + "/mimic"))
			.header("X-Client", client)
			.timeout(Duration.ofSeconds(30))
			.GET()
			.build();
	}

	private static int status(ConfigurableApplicationContext instance, String client) {
		return Instances.http(instance).status("/mimic", "X-Client", client);
	}

	private static long denialsOf(ConfigurableApplicationContext instance) {
		return ((Number) policyTop(instance).get("denials")).longValue();
	}

	private static Map<String, Object> policyTop(ConfigurableApplicationContext instance) {
		return body(get(instance, "/actuator/ratelimits/per-client/top"));
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> topOf(ConfigurableApplicationContext instance) {
		return (List<Map<String, Object>>) policyTop(instance).get("top");
	}

	private static HttpResponse<String> get(ConfigurableApplicationContext instance, String path) {
		return send(instance, "GET", path, null);
	}

	private static HttpResponse<String> send(ConfigurableApplicationContext instance, String method, String path,
			String body) {
		return Actuator.send(instance, method, path, body);
	}

	private static Map<String, Object> body(HttpResponse<String> response) {
		return Actuator.body(response, 200);
	}

}
