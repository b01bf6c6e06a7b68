package io.github.ratelimit.it.webflux;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On WebFlux too, an IPv6 client rotating addresses within its /64 gets no fresh quota, and an IPv4-mapped address
 * counts as the IPv4 address (policy {@code per-ip}: 2 per hour, key {@code ip}, on {@code /ip/**}). The client
 * address comes from {@code X-Forwarded-For}, applied by Reactor Netty under
 * {@code server.forward-headers-strategy=native}, as behind a reverse proxy (IPv6 in brackets: Reactor Netty did not
 * answer a request whose {@code X-Forwarded-For} held a bare IPv6 address when this was written).
 */
@SpringBootTest(classes = WebfluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=native")
class HostileClientIntegrationTests extends WebfluxIntegrationTestSupport {

	@Test
	void anIpv6ClientRotatingAddressesWithinItsSlash64SharesOneQuota() {
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "[2001:db8:9:1::1]").statusCode())
			.isEqualTo(200);
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "[2001:db8:9:1::2]").statusCode())
			.isEqualTo(200);
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "[2001:db8:9:1:abcd::3]").statusCode())
			.isEqualTo(429);
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "[2001:db8:9:2::1]").statusCode())
			.as("the next /64")
			.isEqualTo(200);
		assertThat(REDIS.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{ip:2001:db8:9:1::/64}:per-ip:s2",
				"rl:{ip:2001:db8:9:2::/64}:per-ip:s2");
	}

	@Test
	void anIpv4MappedAddressCountsAsTheIpv4Address() {
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "198.51.100.9").statusCode())
			.isEqualTo(200);
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "::ffff:198.51.100.9").statusCode())
			.isEqualTo(200);
		assertThat(get(this.port, "/ip/hello", "any", "X-Forwarded-For", "::ffff:c633:6409").statusCode())
			.isEqualTo(429);
	}

}
