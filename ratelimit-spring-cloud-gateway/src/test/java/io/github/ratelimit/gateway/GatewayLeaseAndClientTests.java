package io.github.ratelimit.gateway;

import java.util.UUID;
import java.util.function.Supplier;

import io.github.ratelimit.core.redis.LeasingBackend;
import io.github.ratelimit.spring.client.PartnerExchangeFilter;
import io.github.ratelimit.spring.client.PartnerRateLimitedException;
import io.github.ratelimit.spring.client.RateLimitedClients;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static io.github.ratelimit.gateway.GatewayTestApplication.get;
import static io.github.ratelimit.gateway.GatewayTestApplication.port;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Leased quotas and the client side in applications on Spring Cloud's BOM (this module's tests import it as
 * docs/gateway.md says): two gateways on one real Redis, a route on a leased policy ({@code application-leased.yml}),
 * and the first gateway's {@link RateLimitedClients} calling the second's route through a RestClient and a WebClient.
 * Each client gets exactly the limit, then a refusal; the limit is the one both gateways share.
 */
class GatewayLeaseAndClientTests {

	private static final int LIMIT = 10;

	private static RedisServer redis;

	private static Backend backend;

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void start() {
		redis = RedisServers.standalone();
		backend = Backend.start();
		first = GatewayTestApplication.start(backend, arguments());
		second = GatewayTestApplication.start(backend, arguments());
	}

	private static String[] arguments() {
		return new String[] { "--spring.profiles.active=leased", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port() };
	}

	@AfterAll
	static void stop() {
		GatewayTestApplication.closeAll(first, second, backend);
	}

	@Test
	void bothGatewaysDecideWithLeases() {
		assertThat(first.getBean(LeasingBackend.class).leases()).containsOnlyKeys("leased");
		assertThat(second.getBean(LeasingBackend.class).leases()).containsOnlyKeys("leased");
	}

	@Test
	void aRestClientGetsTheLeasedLimitOfTheOtherGatewayThenARefusal() {
		String identity = "rest-" + UUID.randomUUID();
		RestClient client = RestClient.builder()
			.baseUrl("http://127.0.0.1:" + port(second))
			.defaultHeader("X-Client", identity)
			.defaultHeader("Connection", "close")
			.requestInterceptor(first.getBean(RateLimitedClients.class).restClient("gateway-rest"))
			.build();
		assertLimitThenRefusal(identity, () -> client.get().uri("/leased/orders").retrieve().toBodilessEntity());
	}

	@Test
	void aWebClientGetsTheLeasedLimitOfTheOtherGatewayThenARefusal() {
		String identity = "web-" + UUID.randomUUID();
		WebClient client = WebClient.builder()
			.baseUrl("http://127.0.0.1:" + port(second))
			.defaultHeader("X-Client", identity)
			.defaultHeader("Connection", "close")
			.filter(PartnerExchangeFilter.of(first.getBean(RateLimitedClients.class).partner("gateway-web")))
			.build();
		assertLimitThenRefusal(identity,
				() -> client.get().uri("/leased/orders").retrieve().toBodilessEntity().block());
	}

	/** The limit's calls succeed, the next fails as rate limited; the first gateway then denies the identity too. */
	private static void assertLimitThenRefusal(String identity, Supplier<?> call) {
		int hits = backend.hits();
		for (int i = 0; i < LIMIT; i++) {
			call.get();
		}
		assertThatExceptionOfType(PartnerRateLimitedException.class).isThrownBy(call::get);
		assertThat(backend.hits() - hits).isEqualTo(LIMIT);
		assertThat(get(first, "/leased/orders", identity).statusCode()).as("the limit both gateways share")
			.isEqualTo(429);
	}

}
