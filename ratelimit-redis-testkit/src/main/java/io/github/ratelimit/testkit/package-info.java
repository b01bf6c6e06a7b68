/**
 * Test harness that starts real {@code redis-server} processes (standalone, Redis Cluster and
 * Redis Sentinel) on free loopback ports.
 *
 * <p>Entry points: {@link io.github.ratelimit.testkit.RedisServer},
 * {@link io.github.ratelimit.testkit.RedisClusterServer},
 * {@link io.github.ratelimit.testkit.RedisSentinelServer} and the JVM-wide shared instances in
 * {@link io.github.ratelimit.testkit.RedisServers}. The {@code redis-server} executable is located
 * by {@link io.github.ratelimit.testkit.RedisBinary}.
 *
 * <p>Faults for resilience tests, all real (no mocks), on setups a test starts for itself:
 * <ul>
 * <li>process faults: {@link io.github.ratelimit.testkit.RedisServer#kill()} (SIGKILL),
 * {@link io.github.ratelimit.testkit.RedisServer#freeze()} / {@code thaw()} (SIGSTOP / SIGCONT) and
 * {@link io.github.ratelimit.testkit.RedisServer#restart()} on the same port;</li>
 * <li>failovers: {@link io.github.ratelimit.testkit.RedisSentinelServer#killMaster()} and
 * {@link io.github.ratelimit.testkit.RedisClusterServer#killMaster(HostAndPort)}, each followed by
 * {@code awaitFailover(Duration)};</li>
 * <li>network faults: a {@link io.github.ratelimit.testkit.TcpProxy} between client and server
 * (latency, blackhole, reset, refused connects).</li>
 * </ul>
 */
@NullMarked
package io.github.ratelimit.testkit;

import org.jspecify.annotations.NullMarked;
