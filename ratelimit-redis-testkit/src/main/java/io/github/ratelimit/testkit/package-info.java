/**
 * Test harness that starts real {@code redis-server} processes (standalone, Redis Cluster and
 * Redis Sentinel) on free loopback ports.
 *
 * <p>Entry points: {@link io.github.ratelimit.testkit.RedisServer},
 * {@link io.github.ratelimit.testkit.RedisClusterServer},
 * {@link io.github.ratelimit.testkit.RedisSentinelServer} and the JVM-wide shared instances in
 * {@link io.github.ratelimit.testkit.RedisServers}. The {@code redis-server} executable is located
 * by {@link io.github.ratelimit.testkit.RedisBinary}.
 */
@NullMarked
package io.github.ratelimit.testkit;

import org.jspecify.annotations.NullMarked;
