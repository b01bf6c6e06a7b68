package io.github.ratelimit.it.client;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.ratelimit.spring.client.PartnerRateLimitedException;
import io.github.ratelimit.spring.client.RateLimitedClients;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Outgoing calls that honour a partner's limits, against real partners: an application limited by this starter on
 * a random port (RateLimit and RateLimit-Policy with pk, X-RateLimit-*, Retry-After in seconds), and a JDK HTTP
 * server sending only X-RateLimit-* and Retry-After as an HTTP-date; called by two client instances (two application
 * contexts) sharing one Redis. Outcomes and counts only: no timing is asserted.
 */
class PartnerCallsIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private static ConfigurableApplicationContext partner;

	private final List<ConfigurableApplicationContext> callers = new ArrayList<>();

	private final AtomicInteger keptInRedis = new AtomicInteger();

	@BeforeAll
	static void startPartner() {
		redis.flushAll();
		partner = new SpringApplicationBuilder(PartnerApplication.class).run("--server.port=0",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
				"--ratelimit.headers.partition-key-secret=partner-secret",
				"--ratelimit.policies.partner-items.algorithm=fixed-window",
				"--ratelimit.policies.partner-items.limit=4", "--ratelimit.policies.partner-items.window=2s",
				"--ratelimit.policies.partner-items.key=global",
				// a sliding window log: a fixed window's boundary (each whole hour) after the client's one order
				// would refill it
				"--ratelimit.policies.partner-orders.algorithm=sliding-window-log",
				"--ratelimit.policies.partner-orders.limit=1", "--ratelimit.policies.partner-orders.window=1h",
				"--ratelimit.policies.partner-orders.key=header:X-Client",
				"--ratelimit.filter.rules[0].paths=/partner/items/**",
				"--ratelimit.filter.rules[0].policies=partner-items", "--ratelimit.filter.rules[1].paths=/partner/orders",
				"--ratelimit.filter.rules[1].policies=partner-orders");
	}

	@AfterAll
	static void stopPartner() {
		if (partner != null) {
			partner.close();
		}
	}

	@AfterEach
	void stopCallers() {
		this.callers.forEach(ConfigurableApplicationContext::close);
	}

	/**
	 * A client instance on a Redis: partners {@code ours}, {@code legacy}, {@code orders}, {@code orders-retrying},
	 * {@code legacy.date}.
	 */
	private ConfigurableApplicationContext caller(RedisServer shared) {
		ConfigurableApplicationContext caller = new SpringApplicationBuilder(CallerApplication.class).run(
				"--spring.main.web-application-type=none", "--spring.data.redis.host=" + shared.host(),
				"--spring.data.redis.port=" + shared.port(), "--ratelimit.redis.timeout=1s",
				"--ratelimit.client.partners.ours.max-wait=30s",
				"--ratelimit.client.partners.legacy.max-wait=30s", "--ratelimit.client.partners.orders.max-wait=30s",
				"--ratelimit.client.partners.orders-retrying.retry-non-idempotent=true",
				// a name with dots is bound in the bracket form of a map key
				"--ratelimit.client.partners[legacy.date].max-wait=30s");
		this.callers.add(caller);
		return caller;
	}

	private static RestClient client(ConfigurableApplicationContext caller, String name, String baseUrl) {
		return RestClient.builder()
			.baseUrl(baseUrl)
			.requestInterceptor(caller.getBean(RateLimitedClients.class).restClient(name))
			.build();
	}

	private static String partnerUrl() {
		return "http://127.0.0.1:" + ((WebServerApplicationContext) partner).getWebServer().getPort();
	}

	private static PartnerApplication counts() {
		return partner.getBean(PartnerApplication.class);
	}

	private static long waits(ConfigurableApplicationContext caller, String name) {
		Timer waits = caller.getBean(MeterRegistry.class).find("ratelimit.client.waits").tag("partner", name).timer();
		return (waits != null) ? waits.count() : 0;
	}

	private static double retries(ConfigurableApplicationContext caller, String name) {
		return caller.getBean(MeterRegistry.class)
			.find("ratelimit.client.retries")
			.tag("partner", name)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	/** Runs a batch of calls on each client at once, a thread each; every call's answer. */
	private static List<String> batches(int calls, List<Supplier<String>> clients) {
		ExecutorService threads = Executors.newFixedThreadPool(clients.size());
		try {
			List<CompletableFuture<List<String>>> runs = clients.stream()
				.map((client) -> CompletableFuture.supplyAsync(() -> {
					List<String> answers = new ArrayList<>();
					for (int i = 0; i < calls; i++) {
						answers.add(client.get());
					}
					return answers;
				}, threads))
				.toList();
			return runs.stream().flatMap((run) -> run.join().stream()).toList();
		}
		finally {
			threads.shutdown();
		}
	}

	/** A call, then whether the partner's state is in Redis right after it (its TTL may run out once a batch ends). */
	private Supplier<String> keptInRedis(Supplier<String> call, String partnerName) {
		return () -> {
			String answer = call.get();
			if (redis.commands().exists("rl:client:{" + partnerName + "}") == 1) {
				this.keptInRedis.incrementAndGet();
			}
			return answer;
		};
	}

	@Test
	void aBatchLargerThanThePartnersQuotaCompletesWithNo429ReachingTheCaller() {
		ConfigurableApplicationContext first = caller(redis);
		ConfigurableApplicationContext second = caller(redis);
		int before = counts().received("GET /partner/items 200");
		int refusedBefore = counts().received("GET /partner/items 429");
		List<String> answers = batches(6, List.of(keptInRedis(
				() -> client(first, "ours", partnerUrl()).get().uri("/partner/items/1").retrieve().body(String.class),
				"ours"),
				() -> client(second, "ours", partnerUrl()).get().uri("/partner/items/2").retrieve().body(String.class)));
		// 12 calls on a quota of 4 per 2 s: each one answered, none refused to the callers
		assertThat(answers).hasSize(12).allMatch((answer) -> answer.startsWith("item "));
		assertThat(counts().received("GET /partner/items 200") - before).isEqualTo(12);
		assertThat(waits(first, "ours") + waits(second, "ours")).isPositive();
		// paced: a 429 the partner sent (a race of the two instances' first calls) was retried, never given back
		assertThat(retries(first, "ours") + retries(second, "ours"))
			.isEqualTo(counts().received("GET /partner/items 429") - refusedBefore);
		// what they learned is in Redis, under the key prefix, per partner (seen during the batch)
		assertThat(this.keptInRedis).hasPositiveValue();
	}

	@Test
	void aRefusedPostIsNotRetried() {
		ConfigurableApplicationContext caller = caller(redis);
		String client = UUID.randomUUID().toString();
		RestClient.builder().baseUrl(partnerUrl()).defaultHeader("X-Client", client).build()
			.post().uri("/partner/orders").retrieve().toBodilessEntity(); // the client's one order of the hour
		int refusedBefore = counts().received("POST /partner/orders 429");
		for (String partnerName : List.of("orders", "orders-retrying")) {
			RestClient orders = RestClient.builder()
				.baseUrl(partnerUrl())
				.defaultHeader("X-Client", client)
				.requestInterceptor(caller.getBean(RateLimitedClients.class).restClient(partnerName))
				.build();
			assertThatExceptionOfType(PartnerRateLimitedException.class)
				.isThrownBy(() -> orders.post().uri("/partner/orders").retrieve().toBodilessEntity())
				.satisfies((refused) -> {
					assertThat(refused.status()).isEqualTo(429);
					assertThat(refused.retryAfter()).isPositive();
					assertThat(refused.quotas()).singleElement().satisfies((quota) -> {
						assertThat(quota.policy()).isEqualTo("partner-orders");
						assertThat(quota.remaining()).isZero();
						assertThat(quota.limit()).isEqualTo(1);
						// the partner's 1h window, believed up to max-believed (10 min by default)
						assertThat(quota.windowSeconds()).isEqualTo(600);
						assertThat(quota.partition()).isNotEmpty(); // the partner's pk
					});
				});
		}
		// each sent once: "orders" does not retry a POST; "orders-retrying" would, but not 10 min later (max-wait 30s)
		assertThat(counts().received("POST /partner/orders 429") - refusedBefore).isEqualTo(2);
		assertThat(retries(caller, "orders") + retries(caller, "orders-retrying")).isZero();
	}

	@Test
	void moreConcurrentCallersThanTheLegacyPartnersQuotaCompleteWithNo429ReachingThem() throws Exception {
		try (LegacyPartner legacy = new LegacyPartner(3, 2000)) {
			ConfigurableApplicationContext first = caller(redis);
			ConfigurableApplicationContext second = caller(redis);
			List<Supplier<String>> callers = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				String path = "/" + i;
				callers.add(() -> client(first, "legacy", legacy.baseUrl()).get().uri(path + "a").retrieve()
					.body(String.class));
				callers.add(() -> client(second, "legacy", legacy.baseUrl()).get().uri(path + "b").retrieve()
					.body(String.class));
			}
			// 8 callers at once, 2 calls each, on 3 calls per 2 s shared by two instances
			List<String> answers = batches(2, callers);
			assertThat(answers).hasSize(16).containsOnly("ok");
			assertThat(legacy.served.get()).isEqualTo(16);
			assertThat(waits(first, "legacy") + waits(second, "legacy")).isPositive();
			assertThat(retries(first, "legacy") + retries(second, "legacy")).isEqualTo(legacy.refused.get());
			assertThat(legacy.earlyRetries.get()).isZero();
		}
	}

	@Test
	void aRetryAfterHttpDateLaterThanTheResetIsWaitedFor() throws Exception {
		try (LegacyPartner legacy = new LegacyPartner(100, 60_000)) {
			ConfigurableApplicationContext caller = caller(redis);
			// the next call is refused with only a Retry-After date 2 s on (no X-RateLimit-*: the date alone counts)
			legacy.refuseNext(2000);
			assertThat(client(caller, "legacy.date", legacy.baseUrl()).get().uri("/c").retrieve().body(String.class))
				.isEqualTo("ok");
			assertThat(legacy.refused.get()).isOne();
			assertThat(retries(caller, "legacy.date")).isOne();
			// the partner compared the retry's arrival with the date it sent (its own clock): not before it
			assertThat(legacy.earlyRetries.get()).isZero();
			assertThat(legacy.served.get()).isOne();
		}
	}

	@Test
	void withTheCallersRedisKilledMidBatchCallsGoOnPerInstance() {
		RedisServer callersRedis = RedisServer.start();
		try {
			ConfigurableApplicationContext first = caller(callersRedis);
			ConfigurableApplicationContext second = caller(callersRedis);
			RestClient one = client(first, "ours", partnerUrl());
			RestClient two = client(second, "ours", partnerUrl());
			List<String> answers = new ArrayList<>(batches(2, List.of(
					() -> one.get().uri("/partner/items/1").retrieve().body(String.class),
					() -> two.get().uri("/partner/items/2").retrieve().body(String.class))));
			callersRedis.kill();
			answers.addAll(batches(5, List.of(() -> one.get().uri("/partner/items/1").retrieve().body(String.class),
					() -> two.get().uri("/partner/items/2").retrieve().body(String.class))));
			assertThat(answers).hasSize(14).allMatch((answer) -> answer.startsWith("item "));
		}
		finally {
			callersRedis.stop();
		}
	}

}
