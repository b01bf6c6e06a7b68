package io.github.ratelimit.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class a real Redis: a {@code redis-server} process on a free loopback port, no Docker and nothing
 * installed (the binary is taken from the {@code PATH} or extracted from a Maven artifact, see
 * {@code ratelimit-redis-testkit}). In a Spring test ({@code @SpringBootTest}) the server is handed to Spring Boot
 * as its {@code DataRedisConnectionDetails}, the way {@code @ServiceConnection} hands over a container, so
 * {@code spring.data.redis.*} need not be set and the rate limiter runs on the Redis backend. Its time budget
 * ({@code ratelimit.redis.timeout}) becomes 1 s unless the test sets it, so that a busy build machine sees the
 * limiter's decisions, not its failure modes. Test methods and lifecycle methods may also take the server as a
 * parameter ({@code RedisServer}, or {@code RedisClusterServer} with {@link Topology#CLUSTER}).
 * <p>
 * One server of each topology is shared by every test class of the JVM (started on first use, stopped when the JVM
 * exits), so Spring's context cache keeps working across classes. The state of earlier tests is therefore still
 * there: reset it with {@link RateLimitTester#resetAll()} before each test.
 * <pre>{@code
 * @SpringBootTest
 * @AutoConfigureMockMvc
 * @EmbeddedRedis
 * class OrderApiTests {
 *
 *     @Autowired MockMvcTester mvc;
 *     @Autowired RateLimitTester rateLimits;
 *
 *     @BeforeEach void reset() { rateLimits.resetAll(); }
 *     ...
 * }
 * }</pre>
 * Needs {@code spring-boot-starter-data-redis} on the test class path.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(EmbeddedRedisExtension.class)
public @interface EmbeddedRedis {

	/**
	 * The Redis setup to start.
	 * @return standalone by default
	 */
	Topology value() default Topology.STANDALONE;

	/** A Redis setup. */
	enum Topology {

		/** One standalone server. */
		STANDALONE,

		/** A Redis Cluster of three masters without replicas, each a process of its own. */
		CLUSTER

	}

}
