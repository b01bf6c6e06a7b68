package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.testkit.RedisServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.github.ratelimit.testkit.RedisServers;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ConfigurableApplicationContext;

import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Two gateways on random ports, one real Redis, a real backend on loopback: the routes' RequestRateLimiter filters
 * use the {@link PolicyRateLimiter} (and one route the gateway's own RedisRateLimiter).
 */
class GatewayIntegrationTests {

	private static final String PROBLEM_TYPE = "https://example.test/problems/rate-limited";

	private static RedisServer redis;

	private static Backend backend;

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void start() {
		redis = RedisServers.standalone();
		backend = Backend.start();
		first = GatewayTestApplication.start(backend, redisArguments());
		String[] withProblemType = new ArrayList<>(List.of(redisArguments())) {
			{
				add("--ratelimit.problem.type=" + PROBLEM_TYPE);
			}
		}.toArray(String[]::new);
		second = GatewayTestApplication.start(backend, withProblemType);
	}

	private static String[] redisArguments() {
		return new String[] { "--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port() };
	}

	@AfterAll
	static void stop() {
		GatewayTestApplication.closeAll(first, second, backend);
	}

	@BeforeEach
	void freshCounters() {
		redis.flushAll();
	}

	@Test
	void twoGatewaysShareOneLimit() {
		int hitsBefore = backend.hits();
		List<Integer> statuses = new ArrayList<>();
		HttpResponse<String> denied = null;
		for (int i = 0; i < 8; i++) {
			HttpResponse<String> response = get((i % 2 == 0) ? first : second, "/shared/orders", "shared-client");
			statuses.add(response.statusCode());
			if (response.statusCode() == 200) {
				assertThat(response.body()).isEqualTo("backend /shared/orders");
			}
			else {
				denied = response;
			}
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
		assertThat(backend.hits() - hitsBefore).isEqualTo(5);
		assertThat(denied).isNotNull();
		// the last denial came from the second gateway, which has its own problem type
		assertThat(header(denied, "Content-Type")).startsWith("application/problem+json");
		assertThat(denied.body()).contains("\"status\":429").contains("\"type\":\"" + PROBLEM_TYPE + "\"");
		assertThat(Long.parseLong(header(denied, "Retry-After"))).isPositive();
		assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
		HttpResponse<String> fromFirst = get(first, "/shared/orders", "shared-client");
		assertThat(fromFirst.statusCode()).isEqualTo(429);
		// the other gateway's default problem type: the draft's quota-exceeded, naming the violated policies
		assertThat(fromFirst.body()).contains(
				"\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"",
				"\"violated-policies\":[\"shared\"]");
		// the route's decisions are the starter's meters, by policy and outcome
		assertThat(decisions(first, "shared", "allowed") + decisions(second, "shared", "allowed")).isEqualTo(5);
		assertThat(decisions(first, "shared", "denied")).isEqualTo(2);
		assertThat(decisions(second, "shared", "denied")).isEqualTo(2);
	}

	private static double decisions(ConfigurableApplicationContext gateway, String policy, String outcome) {
		Counter counter = gateway.getBean(MeterRegistry.class)
			.find("ratelimit.decisions")
			.tags("policy", policy, "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void everyPolicyOfARouteIsCheckedInOneCallAndADenialTakesNothingFromTheOthers() {
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> admitted = get((i % 2 == 0) ? first : second, "/multi/x", "multi-client");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(remaining(admitted, "per-minute")).isEqualTo(3 - i);
			assertThat(remaining(admitted, "per-hour")).isEqualTo(5 - i);
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> denied = get(first, "/multi/x", "multi-client");
			assertThat(denied.statusCode()).isEqualTo(429);
			// per-minute denies; per-hour keeps the two it had: a denied request takes nothing
			assertThat(remaining(denied, "per-minute")).isZero();
			assertThat(remaining(denied, "per-hour")).isEqualTo(2);
		}
		assertThat(get(second, "/multi/x", "another-client").statusCode()).isEqualTo(200);
	}

	@Test
	void rateLimitHeadersAreStructuredFieldLists() {
		HttpResponse<String> admitted = get(first, "/multi/y", "sfv-client");
		List<ListElement<?>> policies = Parser.parseList(header(admitted, "RateLimit-Policy")).get();
		assertThat(policies).hasSize(2);
		assertThat(name(policies.get(0))).isEqualTo("per-minute");
		assertThat(integer(policies.get(0), "q")).isEqualTo(3);
		assertThat(integer(policies.get(0), "w")).isEqualTo(60);
		assertThat(name(policies.get(1))).isEqualTo("per-hour");
		assertThat(integer(policies.get(1), "q")).isEqualTo(5);
		assertThat(integer(policies.get(1), "w")).isEqualTo(3600);
		List<ListElement<?>> limits = Parser.parseList(header(admitted, "RateLimit")).get();
		assertThat(limits).hasSize(2);
		assertThat(integer(limits.get(0), "r")).isEqualTo(2);
		assertThat(integer(limits.get(0), "t")).isBetween(0L, 60L);
		assertThat(integer(limits.get(1), "r")).isEqualTo(4);
		get(first, "/multi/y", "sfv-client");
		get(first, "/multi/y", "sfv-client");
		HttpResponse<String> denied = get(second, "/multi/y", "sfv-client");
		assertThat(denied.statusCode()).isEqualTo(429);
		List<ListElement<?>> deniedLimits = Parser.parseList(header(denied, "RateLimit")).get();
		assertThat(integer(deniedLimits.get(0), "r")).isZero();
		assertThat(integer(deniedLimits.get(0), "t")).isBetween(1L, 60L);
		assertThat(Long.parseLong(header(denied, "Retry-After"))).isGreaterThanOrEqualTo(integer(deniedLimits.get(0), "t"));
	}

	@Test
	void aClientThatWaitsRetryAfterIsAdmitted() throws InterruptedException {
		assertThat(get(first, "/short/a", "patient-client").statusCode()).isEqualTo(200);
		HttpResponse<String> denied = get(second, "/short/a", "patient-client");
		if (denied.statusCode() == 200) {
			// fixed windows are aligned to the clock: the two requests fell on both sides of a window boundary, so
			// the second one opened the next window, and a third, through the other gateway, is denied in it
			denied = get(first, "/short/a", "patient-client");
		}
		assertThat(denied.statusCode()).isEqualTo(429);
		long retryAfter = Long.parseLong(header(denied, "Retry-After"));
		assertThat(retryAfter).isBetween(1L, 2L);
		Thread.sleep(retryAfter * 1000);
		assertThat(get(first, "/short/a", "patient-client").statusCode()).isEqualTo(200);
	}

	@Test
	void aConcurrencyPermitIsHeldWhileTheBackendAnswersAndReleasedWithTheResponse() {
		int hitsBefore = backend.hits();
		CompletableFuture<HttpResponse<String>> held = CompletableFuture
			.supplyAsync(() -> get(first, "/slots/hold", "slot-client"));
		try {
			backend.awaitHits(hitsBefore + 1, held);
			HttpResponse<String> refused = get(second, "/slots/other", "slot-client");
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(get(second, "/slots/other", "another-slot-client").statusCode()).isEqualTo(200);
		}
		finally {
			backend.release();
		}
		assertThat(held.join().statusCode()).isEqualTo(200);
		for (int i = 0; i < 5; i++) {
			// each response ends after its permit is back: the next request of the client is admitted
			assertThat(get((i % 2 == 0) ? first : second, "/slots/next", "slot-client").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void aDenialByALaterFilterOfTheRouteGivesBackWhatTheEarlierOneTook() {
		for (int i = 0; i < 3; i++) {
			assertThat(get(first, "/layered/a", "busy-client", "X-Tenant", "full-tenant").statusCode()).isEqualTo(200);
		}
		// the client filter admits, the tenant filter denies: the client's count is given back
		for (int i = 0; i < 3; i++) {
			assertThat(get(second, "/layered/a", "quiet-client", "X-Tenant", "full-tenant").statusCode())
				.isEqualTo(429);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(get((i % 2 == 0) ? first : second, "/layered/a", "quiet-client", "X-Tenant", "other-tenant")
				.statusCode()).as("request %d of a client whose denied requests took nothing", i + 1).isEqualTo(200);
		}
	}

	@Test
	void theGatewaysOwnRedisRateLimiterKeepsWorkingOnItsRoute() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			statuses.add(get(first, "/classic/a", "classic-client").statusCode());
		}
		assertThat(statuses).startsWith(200, 200).contains(429);
	}

	@Test
	void aRouteNamingAnUnknownPolicyFailsTheStartNamingTheProperty() {
		assertThatException().isThrownBy(() -> GatewayTestApplication.start(backend, badRoute("nope")))
			.satisfies((ex) -> {
				InvalidConfigurationPropertyValueException invalid = invalidProperty(ex);
				assertThat(invalid.getName())
					.isEqualTo("spring.cloud.gateway.server.webflux.routes[0].filters[0].args[ratelimit.policies]");
				assertThat(invalid.getValue()).isEqualTo("nope");
				assertThat(invalid.getReason()).contains("unknown policy 'nope'");
			});
	}

	@Test
	void aRouteWithoutPoliciesFailsTheStartUnlessDefaultsAreSet() {
		assertThatException().isThrownBy(() -> GatewayTestApplication.start(backend, badRoute(null)))
			.satisfies((ex) -> assertThat(invalidProperty(ex).getReason()).contains("must name its policies"));
		List<String> withDefaults = new ArrayList<>(List.of(badRoute(null)));
		withDefaults.add("--ratelimit.gateway.default-policies=shared");
		try (ConfigurableApplicationContext gateway = GatewayTestApplication.start(backend,
				withDefaults.toArray(String[]::new))) {
			for (int i = 0; i < 5; i++) {
				assertThat(get(gateway, "/bad/a", "default-client").statusCode()).isEqualTo(200);
			}
			assertThat(get(gateway, "/bad/a", "default-client").statusCode()).isEqualTo(429);
		}
	}

	private static String[] badRoute(String policies) {
		String route = "--spring.cloud.gateway.server.webflux.routes[0].";
		List<String> args = new ArrayList<>(List.of(redisArguments()));
		args.addAll(List.of(route + "id=bad", route + "uri=" + backend.uri(), route + "predicates[0]=Path=/bad/**",
				route + "filters[0].name=RequestRateLimiter",
				route + "filters[0].args[key-resolver]=#{@clientKeyResolver}"));
		if (policies != null) {
			args.add(route + "filters[0].args[ratelimit.policies]=" + policies);
		}
		return args.toArray(String[]::new);
	}

	private static InvalidConfigurationPropertyValueException invalidProperty(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidConfigurationPropertyValueException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("not an invalid property", failure);
	}

	static long remaining(HttpResponse<?> response, String policy) {
		for (ListElement<?> element : Parser.parseList(header(response, "RateLimit")).get()) {
			if (policy.equals(name(element))) {
				return integer(element, "r");
			}
		}
		throw new AssertionError("no RateLimit entry for " + policy + " in " + response.headers().map());
	}

	private static String name(ListElement<?> element) {
		assertThat(element).isInstanceOf(StringItem.class);
		return ((StringItem) element).get();
	}

	private static long integer(ListElement<?> element, String parameter) {
		Item<?> value = element.getParams().get(parameter);
		assertThat(value).as(parameter + " of " + element.serialize()).isInstanceOf(IntegerItem.class);
		return ((IntegerItem) value).get();
	}

}
