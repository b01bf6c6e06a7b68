package io.github.ratelimit.it.nonweb;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code @RateLimited} on a plain bean of two instances of a non-web application (no web server on the classpath),
 * sharing one real Redis: the limit holds across both, a denial throws {@link RateLimitExceededException} with the
 * decision, and a call allowed to wait gets its turn after the retry-after the denial named.
 */
class NonWebRateLimitedBeanIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void startInstances() {
		first = start();
		second = start();
	}

	@AfterAll
	static void stopInstances() {
		for (ConfigurableApplicationContext instance : new ConfigurableApplicationContext[] { first, second }) {
			if (instance != null) {
				instance.close();
			}
		}
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplication(PartnerApplication.class).run("--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port());
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		for (ConfigurableApplicationContext instance : new ConfigurableApplicationContext[] { first, second }) {
			client(instance).calls().clear();
			recorder(instance).decisions.clear();
		}
	}

	@Test
	void theApplicationHasNoWebServer() {
		assertThat(new SpringApplication(PartnerApplication.class).getWebApplicationType())
			.isEqualTo(WebApplicationType.NONE);
		for (String server : List.of("org.apache.catalina.startup.Tomcat", "org.eclipse.jetty.server.Server",
				"reactor.netty.http.server.HttpServer", "io.undertow.Undertow", "jakarta.servlet.Servlet")) {
			assertThat(ClassUtils.isPresent(server, null)).as(server).isFalse();
		}
		assertThat(AopUtils.isAopProxy(client(first))).isTrue();
	}

	@Test
	void twoInstancesShareOneLimitAndADenialCarriesItsDecision() {
		PartnerClient[] clients = { client(first), client(second) };
		int admitted = 0;
		List<RateLimitExceededException> denials = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			try {
				assertThat(clients[i % 2].order("o" + i)).isEqualTo("order o" + i);
				admitted++;
			}
			catch (RateLimitExceededException ex) {
				denials.add(ex);
			}
		}
		assertThat(admitted).isEqualTo(5);
		assertThat(client(first).calls().size() + client(second).calls().size()).isEqualTo(5);
		assertThat(denials).hasSize(3).allSatisfy((denial) -> {
			PolicyDecision decision = denial.decision().deciding().orElseThrow();
			assertThat(decision.policy().name()).isEqualTo("partner");
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.remaining()).isZero();
			assertThat(denial.decision().retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
		});
		// the calls were denied before running: only 5 reached the partner, whichever instance made them
		assertThat(client(first).calls()).hasSize(3);
		assertThat(client(second).calls()).hasSize(2);
	}

	@Test
	void aSpelKeyOverTheArgumentsCountsEachCustomerApart() {
		PartnerClient client = client(first);
		for (String customer : List.of("initech", "initech", "hooli", "hooli")) {
			assertThat(client.statement(customer)).isEqualTo("statement " + customer);
		}
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> client(second).statement("hooli"))
			.satisfies((denial) -> assertThat(denial.decision().deciding().orElseThrow().identity())
				.isEqualTo(KeySpec.parse("#customer", (name) -> null).identity("hooli")));
		assertThat(client(second).statement("umbrella")).isEqualTo("statement umbrella");
	}

	@Test
	void aCallThatMayWaitRunsOnceTheRetryAfterOfItsDenialHasPassed() {
		// the first instance takes the turn; the second is denied, waits for the retry-after, and is admitted
		assertThat(client(first).quote("first")).isEqualTo("quote first");
		assertThat(client(second).quote("second")).isEqualTo("quote second");
		List<RecordingRateLimiter.Recorded> checks = recorder(second).decisions;
		assertWaitedForEachRetryAfter(checks);
		assertThat(client(second).calls()).containsExactly("second");
	}

	@Test
	void blockingCallsFromBothInstancesAllGetTheirTurnsInOrderOfAdmission() throws Exception {
		List<CompletableFuture<String>> results = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			PartnerClient client = client((i % 2 == 0) ? first : second);
			String id = "q" + i;
			results.add(CompletableFuture.supplyAsync(() -> client.quote(id)));
		}
		for (int i = 0; i < 4; i++) {
			assertThat(results.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("quote q" + i);
		}
		List<RecordingRateLimiter.Recorded> all = new ArrayList<>(recorder(first).decisions);
		all.addAll(recorder(second).decisions);
		// four admissions, one per call, however many denials were waited out
		assertThat(all.stream().filter((recorded) -> recorded.decision().allowed())).hasSize(4);
		assertThat(client(first).calls().size() + client(second).calls().size()).isEqualTo(4);
	}

	@Test
	void reactiveCallsWaitWithoutBlockingTheSubscribingThread() throws Exception {
		Scheduler single = Schedulers.newSingle("subscriber");
		try {
			PartnerClient client = client(first);
			CountDownLatch marker = new CountDownLatch(1);
			List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
			Mono<List<String>> all = Flux
				.merge(client.quoteReactive("r1").doOnNext(order::add), client.quoteReactive("r2").doOnNext(order::add))
				.collectList()
				.subscribeOn(single);
			CompletableFuture<List<String>> result = all.toFuture();
			// runs on the same single thread: it could not run before both calls ended if a wait blocked it
			single.schedule(() -> {
				order.add("subscriber thread free");
				marker.countDown();
			});
			assertThat(marker.await(30, TimeUnit.SECONDS)).isTrue();
			assertThat(result.get(30, TimeUnit.SECONDS)).containsExactlyInAnyOrder("quote r1", "quote r2");
			// the thread was free while one call waited for its turn
			assertThat(order.indexOf("subscriber thread free")).isLessThan(2);
			assertWaitedForEachRetryAfter(recorder(first).decisions);
		}
		finally {
			single.dispose();
		}
	}

	@Test
	void futuresWaitWithoutBlockingTheCaller() throws Exception {
		PartnerClient client = client(first);
		CompletableFuture<String> firstQuote = client.quoteAsync("f1");
		CompletableFuture<String> secondQuote = client.quoteAsync("f2");
		assertThat(firstQuote.get(30, TimeUnit.SECONDS)).isEqualTo("quote f1");
		assertThat(secondQuote.get(30, TimeUnit.SECONDS)).isEqualTo("quote f2");
		assertThat(client.calls()).containsExactlyInAnyOrder("f1", "f2");
		assertWaitedForEachRetryAfter(recorder(first).decisions);
	}

	@Test
	void aCallThatCannotGetItsTurnWithinItsMaxWaitThrowsWithoutWaiting() {
		assertThat(client(first).refund("r1")).isEqualTo("refund r1");
		RateLimitExceededException denial = catchThrowableOfType(RateLimitExceededException.class,
				() -> client(second).refund("r2"));
		// the retry-after (about an hour) is beyond the 2 s max-wait: one check, no wait
		assertThat(denial.decision().retryAfter()).isGreaterThan(Duration.ofSeconds(2));
		assertThat(recorder(second).decisions).hasSize(1);
		assertThat(client(second).calls()).isEmpty();
	}

	@Test
	void theAnnotationsMaxWaitOverridesThePolicys() {
		assertThat(client(first).quote("taken")).isEqualTo("quote taken");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> client(second).quoteOrFail("q"));
		assertThat(recorder(second).decisions).hasSize(1);
		assertThat(client(second).calls()).isEmpty();
	}

	/**
	 * The checks of one call ended with an admission, and each denial before it was followed by the next check no
	 * earlier than its retry-after later.
	 */
	private static void assertWaitedForEachRetryAfter(List<RecordingRateLimiter.Recorded> checks) {
		assertThat(checks).isNotEmpty();
		assertThat(checks.stream().filter((recorded) -> !recorded.decision().allowed())).isNotEmpty();
		assertThat(checks.get(checks.size() - 1).decision().allowed()).isTrue();
		for (int i = 0; i < checks.size() - 1; i++) {
			RateLimitDecision decision = checks.get(i).decision();
			if (!decision.allowed()) {
				RecordingRateLimiter.Recorded next = checks.get(i + 1);
				assertThat(next.answeredNanos() - checks.get(i).answeredNanos())
					.as("check %d came after the retry-after of the denial before it", i + 1)
					.isGreaterThanOrEqualTo(decision.retryAfter().toNanos());
			}
		}
	}

	private static PartnerClient client(ConfigurableApplicationContext instance) {
		return instance.getBean(PartnerClient.class);
	}

	private static RecordingRateLimiter recorder(ConfigurableApplicationContext instance) {
		return (RecordingRateLimiter) instance.getBean(RateLimiter.class);
	}

}
