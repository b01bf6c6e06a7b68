package io.github.ratelimit.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import org.jspecify.annotations.Nullable;

/**
 * A real Redis Sentinel setup on free loopback ports: one master, one replica and one or more
 * sentinels ({@code redis-server <conf> --sentinel}) monitoring the master as
 * {@value #MASTER_NAME} with quorum 1. Start-up waits until the replica is linked and every
 * sentinel reports the master's address and knows the replica (and the other sentinels).
 *
 * <p>For a setup shared by all test classes of the JVM use {@link RedisServers#sentinel()}.
 */
public final class RedisSentinelServer implements AutoCloseable {

	/** The name under which the sentinels monitor the master. */
	public static final String MASTER_NAME = "mymaster";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private final RedisNode master;

	private final RedisNode replica;

	private final List<RedisNode> sentinels;

	private RedisSentinelServer(RedisNode master, RedisNode replica, List<RedisNode> sentinels) {
		this.master = master;
		this.replica = replica;
		this.sentinels = List.copyOf(sentinels);
	}

	/**
	 * Starts a master, a replica and one sentinel.
	 * @return the running setup
	 */
	public static RedisSentinelServer start() {
		return start(1);
	}

	/**
	 * Starts a master, a replica and the given number of sentinels.
	 * @param sentinelCount the number of sentinels, at least 1
	 * @return the running setup
	 * @throws IllegalStateException if a process does not start or the sentinels do not converge in
	 * time
	 */
	public static RedisSentinelServer start(int sentinelCount) {
		if (sentinelCount < 1) {
			throw new IllegalArgumentException("Need at least one sentinel, got " + sentinelCount);
		}
		List<RedisNode> started = new ArrayList<>();
		try {
			RedisNode master = start(started, "sentinel-master", NodeCommand.dataNode(List.of()));
			RedisNode replica = start(started, "sentinel-replica", NodeCommand
				.dataNode(List.of("--replicaof", master.address().host(), String.valueOf(master.port()))));
			// Sentinels discover replicas through the master's INFO: link the replica first.
			Await.until("the replica to link to the master", READY_TIMEOUT, () -> notLinked(replica));
			List<RedisNode> sentinels = new ArrayList<>();
			for (int i = 0; i < sentinelCount; i++) {
				sentinels.add(start(started, "sentinel-" + i, sentinelCommand(master.address())));
			}
			RedisSentinelServer setup = new RedisSentinelServer(master, replica, sentinels);
			Await.until("the sentinels to monitor " + MASTER_NAME, READY_TIMEOUT, setup::notReady);
			return setup;
		}
		catch (RuntimeException ex) {
			RedisNode.stopAll(started);
			throw ex;
		}
	}

	private static RedisNode start(List<RedisNode> started, String name, NodeCommand command) {
		RedisNode node = RedisNode.start(name, Ports::freePort, command);
		started.add(node);
		return node;
	}

	/** Sentinel needs a writable configuration file: it rewrites it with what it discovers. */
	private static NodeCommand sentinelCommand(HostAndPort master) {
		return (port, directory) -> {
			Path configuration = directory.resolve("sentinel.conf");
			Files.writeString(configuration, String.join("\n", "port " + port, "bind " + Ports.LOOPBACK_HOST,
					"protected-mode no", "daemonize no", "dir \"" + directory + "\"",
					"sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 1",
					"sentinel down-after-milliseconds " + MASTER_NAME + " 5000",
					"sentinel failover-timeout " + MASTER_NAME + " 10000", ""), StandardCharsets.UTF_8);
			return List.of(configuration.toString(), "--sentinel");
		};
	}

	private static @Nullable String notLinked(RedisNode replica) {
		return replica.commands().info("replication").contains("master_link_status:up") ? null
				: replica.address() + " has no replication link yet";
	}

	private @Nullable String notReady() {
		for (RedisNode sentinel : this.sentinels) {
			String problem = withSentinel(sentinel.address(), this::sentinelProblem);
			if (problem != null) {
				return "sentinel " + sentinel.address() + ": " + problem;
			}
		}
		return null;
	}

	private @Nullable String sentinelProblem(RedisSentinelCommands<String, String> sentinel) {
		SocketAddress reported = sentinel.getMasterAddrByName(MASTER_NAME);
		if (!(reported instanceof InetSocketAddress address) || address.getPort() != this.master.port()) {
			return "reports master " + reported;
		}
		List<Map<String, String>> knownReplicas = sentinel.replicas(MASTER_NAME);
		boolean replicaKnown = knownReplicas.stream()
			.anyMatch((replica) -> String.valueOf(this.replica.port()).equals(replica.get("port"))
					&& !replica.getOrDefault("flags", "").contains("down"));
		if (!replicaKnown) {
			return "does not know replica " + this.replica.address() + " yet: " + knownReplicas;
		}
		String otherSentinels = sentinel.master(MASTER_NAME).get("num-other-sentinels");
		if (!String.valueOf(this.sentinels.size() - 1).equals(otherSentinels)) {
			return "knows " + otherSentinels + " other sentinels, expected " + (this.sentinels.size() - 1);
		}
		return null;
	}

	private static <T> T withSentinel(HostAndPort sentinel,
			Function<RedisSentinelCommands<String, String>, T> action) {
		RedisClient client = Lettuce.sentinelClient(sentinel, MASTER_NAME);
		try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel()) {
			return action.apply(connection.sync());
		}
		finally {
			Lettuce.shutdown(client);
		}
	}

	/**
	 * Returns the name under which the master is monitored.
	 * @return {@value #MASTER_NAME}
	 */
	public String masterName() {
		return MASTER_NAME;
	}

	/**
	 * Returns the master's address as started (sentinels may fail over to the replica later).
	 * @return the master's address
	 */
	public HostAndPort master() {
		return this.master.address();
	}

	/**
	 * Returns the master's port.
	 * @return the port
	 */
	public int masterPort() {
		return this.master.port();
	}

	/**
	 * Returns the replica's address.
	 * @return the replica's address
	 */
	public HostAndPort replica() {
		return this.replica.address();
	}

	/**
	 * Returns the sentinels' addresses.
	 * @return the sentinel addresses
	 */
	public List<HostAndPort> sentinels() {
		return this.sentinels.stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the sentinels' ports.
	 * @return the ports
	 */
	public List<Integer> sentinelPorts() {
		return this.sentinels.stream().map(RedisNode::port).toList();
	}

	/**
	 * Returns a Lettuce sentinel URI.
	 * @return {@code redis-sentinel://127.0.0.1:<p1>,127.0.0.1:<p2>#mymaster}
	 */
	public String sentinelUri() {
		return "redis-sentinel://" + sentinels().stream().map(HostAndPort::toString).collect(Collectors.joining(","))
				+ "#" + MASTER_NAME;
	}

	/**
	 * Returns synchronous commands on a harness-owned connection to the master, closed by
	 * {@link #close()}.
	 * @return the master's commands
	 */
	public RedisCommands<String, String> masterCommands() {
		return this.master.commands();
	}

	/** Deletes all keys on the master (the replica follows through replication). */
	public void flushAll() {
		masterCommands().flushall();
	}

	/**
	 * Returns whether the master, the replica and every sentinel are still running.
	 * @return {@code true} until stopped (or a process crashed)
	 */
	public boolean isRunning() {
		return allNodes().stream().allMatch(RedisNode::isRunning);
	}

	/** Stops all processes, waits for them to exit and deletes their directories. Idempotent. */
	public void stop() {
		RedisNode.stopAll(allNodes());
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	private List<RedisNode> allNodes() {
		List<RedisNode> all = new ArrayList<>(this.sentinels);
		all.add(this.replica);
		all.add(this.master);
		return all;
	}

	@Override
	public String toString() {
		return "RedisSentinelServer[master=" + master() + ", replica=" + replica() + ", sentinels=" + sentinels() + "]";
	}

}
