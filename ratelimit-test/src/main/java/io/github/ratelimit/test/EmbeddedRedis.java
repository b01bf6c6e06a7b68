package io.github.ratelimit.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class a real Redis: a {@code redis-server} process on a free loopback port, without Docker, handed to
 * Spring Boot as its {@code DataRedisConnectionDetails} (as {@code @ServiceConnection} does), with
 * {@code ratelimit.redis.timeout} 1 s unless the test sets it. Test and lifecycle methods may take a
 * {@code RedisServer} (or {@code RedisClusterServer}) parameter. One server per topology is shared by the JVM's test
 * classes, so contexts stay cached: reset earlier tests' state with {@link RateLimitTester#resetAll()}. Needs
 * {@code spring-boot-starter-data-redis} on the test class path.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(EmbeddedRedisExtension.class)
public @interface EmbeddedRedis {

	/** @return the Redis setup to start, standalone by default */
	Topology value() default Topology.STANDALONE;

	/** A Redis setup. */
	enum Topology {

		/** One standalone server. */
		STANDALONE,

		/** A Redis Cluster of three masters without replicas, each a process of its own. */
		CLUSTER

	}

}
