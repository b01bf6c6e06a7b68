package io.github.ratelimit.it.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.spring.client.PartnerCallListener;
import io.github.ratelimit.spring.client.PartnerExchangeFilter;
import io.github.ratelimit.spring.client.RateLimitedPartner;
import io.github.ratelimit.spring.client.SharedPartnerState;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebClient filter against a partner limited by this starter (the WebFlux application, 4 calls per 2 s on
 * {@code /open}), two client instances (each its own connection and state) sharing one Redis, under BlockHound: a
 * batch larger than the quota is answered whole, and neither the filter nor its Redis state blocks a thread.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PartnerClientIntegrationTests {

	static {
		BlockingCalls.install();
	}

	private static final RedisServer redis = RedisServers.standalone();

	private static ConfigurableApplicationContext partner;

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final AtomicInteger waited = new AtomicInteger();

	private final AtomicInteger keptInRedis = new AtomicInteger();

	@BeforeAll
	static void startPartner() {
		BlockingCalls.drain();
		redis.flushAll();
		partner = new SpringApplicationBuilder(WebfluxTestApplication.class).web(WebApplicationType.REACTIVE)
			.run("--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--ratelimit.policies.partner-open.algorithm=fixed-window",
					"--ratelimit.policies.partner-open.limit=4", "--ratelimit.policies.partner-open.window=2s",
					"--ratelimit.policies.partner-open.key=global", "--ratelimit.filter.rules[0].paths=/open",
					"--ratelimit.filter.rules[0].policies=partner-open");
	}

	@AfterAll
	static void stopPartner() {
		if (partner != null) {
			partner.close();
		}
	}

	@AfterEach
	void closeConnections() {
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

	/** A client instance: its own connection to the shared Redis, its own state, a WebClient with the filter. */
	private WebClient instance() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		RateLimitedPartner partnerCalls = new RateLimitedPartner("webflux-partner",
				new RateLimitedPartner.Settings(Duration.ofSeconds(30), 3, false, 0.5),
				new SharedPartnerState(factory, "rl:", Duration.ofSeconds(1)), new PartnerCallListener() {
					@Override
					public void waited(String name, Duration wait) {
						PartnerClientIntegrationTests.this.waited.incrementAndGet();
					}
				});
		int port = ((WebServerApplicationContext) partner).getWebServer().getPort();
		return WebClient.builder()
			.baseUrl("http://127.0.0.1:" + port)
			.filter(PartnerExchangeFilter.of(partnerCalls))
			.build();
	}

	private Flux<Integer> batch(WebClient client, int calls) {
		return Flux.range(0, calls)
			.concatMap((i) -> client.get().uri("/open").retrieve().toBodilessEntity())
			.concatMap((response) -> keyKept().thenReturn(response.getStatusCode().value()));
	}

	/** Right after a call (its response recorded), whether the partner's state is in Redis: counted, non-blocking. */
	private Mono<Void> keyKept() {
		return new ReactiveStringRedisTemplate(this.factories.get(0)).hasKey("rl:client:{webflux-partner}")
			.doOnNext((kept) -> {
				if (kept) {
					this.keptInRedis.incrementAndGet();
				}
			})
			.then();
	}

	@Test
	void aBatchLargerThanTheQuotaIsAnsweredWholeWithoutBlockingAThread() {
		WebClient first = instance();
		WebClient second = instance();
		List<Integer> statuses = Flux.merge(batch(first, 6), batch(second, 6)).collectList().block();
		// read during the batch: the key's TTL may have run out once it ends
		// 12 calls on a quota of 4 per 2 s: all answered 200 to the callers
		assertThat(statuses).hasSize(12).containsOnly(200);
		assertThat(this.waited).hasPositiveValue();
		assertThat(this.keptInRedis).hasPositiveValue();
		assertThat(BlockingCalls.drain()).as("blocking calls detected by BlockHound").isEmpty();
	}

}
