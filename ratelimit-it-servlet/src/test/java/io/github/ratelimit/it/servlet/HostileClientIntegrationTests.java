package io.github.ratelimit.it.servlet;

import java.net.http.HttpResponse;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that forges its identity gets no fresh quota and drains nobody else's: the value {@code anonymous} in a
 * key header, a key value that mimics another source's identity ({@code ip:127.0.0.1}), and an IPv6 client rotating
 * addresses within its {@code /64}. The client address comes from {@code X-Forwarded-For}, trusted from loopback
 * under {@code server.forward-headers-strategy=native}, as behind a reverse proxy.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=native")
class HostileClientIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	@LocalServerPort
	int port;

	private Http http;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		this.http = new Http(this.port);
	}

	@Test
	void theValueAnonymousIsNotTheSharedIdentityOfRequestsWithoutAKey() {
		// key-shared: 2 per hour per X-Api-Key, requests without one share a bucket
		assertThat(this.http.status("/keys/shared", "X-Api-Key", "anonymous")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared", "X-Api-Key", "anonymous")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared", "X-Api-Key", "anonymous")).isEqualTo(429);
		// the keyless requests were not drained by the forged value...
		assertThat(this.http.status("/keys/shared")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared")).isEqualTo(200);
		assertThat(this.http.status("/keys/shared")).isEqualTo(429);
		// ...and the forged value is still counted as the key it is
		assertThat(this.http.status("/keys/shared", "X-Api-Key", "anonymous")).isEqualTo(429);
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{anonymous}:key-shared:gc",
				"rl:{header.x-api-key:anonymous}:key-shared:gc");
	}

	@Test
	void anAnnotationKeyThatMimicsThePolicysOwnIdentityDoesNotDrainIt() {
		// per-client: 5 per minute per ip (filter rule on /api/**); /mimic names it with key header:X-Client
		String victim = "198.51.100.20";
		for (String forged : new String[] { victim, "ip:" + victim }) {
			for (int i = 0; i < 5; i++) {
				assertThat(this.http.status("/mimic", "X-Client", forged, "X-Forwarded-For", "203.0.113.66"))
					.isEqualTo(200);
			}
			assertThat(this.http.status("/mimic", "X-Client", forged, "X-Forwarded-For", "203.0.113.66"))
				.isEqualTo(429);
		}
		HttpResponse<String> response = this.http.get("/api/hello", "X-Forwarded-For", victim);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{ip:" + victim + "}:per-client:gc",
				"rl:{header.x-client:" + victim + "}:per-client:gc", "rl:{header.x-client:ip:" + victim + "}:per-client:gc");
	}

	@Test
	void anIpv6ClientRotatingAddressesWithinItsSlash64SharesOneQuota() {
		for (int i = 1; i <= 5; i++) {
			assertThat(this.http.status("/api/hello", "X-Forwarded-For", "2001:db8:7:1::" + Integer.toHexString(i)))
				.isEqualTo(200);
		}
		assertThat(this.http.status("/api/hello", "X-Forwarded-For", "2001:db8:7:1:ffff:1234:5678:9abc"))
			.isEqualTo(429);
		assertThat(this.http.status("/api/hello", "X-Forwarded-For", "2001:db8:7:2::1")).as("the next /64")
			.isEqualTo(200);
		assertThat(redis.commands().keys("rl:*")).containsExactlyInAnyOrder("rl:{ip:2001:db8:7:1::/64}:per-client:gc",
				"rl:{ip:2001:db8:7:2::/64}:per-client:gc");
	}

	@Test
	void anIpv4MappedIpv6AddressCountsAsTheIpv4Address() {
		for (int i = 0; i < 5; i++) {
			String address = (i % 2 == 0) ? "198.51.100.9" : "::ffff:198.51.100.9";
			assertThat(this.http.status("/api/hello", "X-Forwarded-For", address)).isEqualTo(200);
		}
		assertThat(this.http.status("/api/hello", "X-Forwarded-For", "::ffff:198.51.100.9")).isEqualTo(429);
		assertThat(redis.commands().keys("rl:*")).containsExactly("rl:{ip:198.51.100.9}:per-client:gc");
	}

}
