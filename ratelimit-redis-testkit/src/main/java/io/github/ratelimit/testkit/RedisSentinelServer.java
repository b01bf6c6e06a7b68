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
 *
 * <p>Failover tests (on a setup of their own):
 * <pre>{@code
 * RedisSentinelServer sentinel = RedisSentinelServer.start();
 * HostAndPort old = sentinel.killMaster();                              // SIGKILL
 * HostAndPort promoted = sentinel.awaitFailover(Duration.ofSeconds(30)); // the replica took over
 * sentinel.restartKilled();                                             // old master, now a replica
 * }</pre>
 * The sentinels consider a master down after 2 s without an answer
 * ({@code down-after-milliseconds 2000}), so a failover completes within a few seconds.
 */
public final class RedisSentinelServer implements AutoCloseable {

	/** The name under which the sentinels monitor the master. */
	public static final String MASTER_NAME = "mymaster";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	/** Short, so that failovers take seconds; still long enough not to mistake a busy master for a dead one. */
	private static final int DOWN_AFTER_MILLIS = 2000;

	private static final int FAILOVER_TIMEOUT_MILLIS = 5000;

	/** The two data nodes, as started: master, then replica. */
	private final List<RedisNode> dataNodes;

	/** The current master; swapped with {@link #replica} by {@link #awaitFailover(Duration)}. */
	private volatile RedisNode master;

	private volatile RedisNode replica;

	private final List<RedisNode> sentinels;

	private RedisSentinelServer(RedisNode master, RedisNode replica, List<RedisNode> sentinels) {
		this.dataNodes = List.of(master, replica);
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
					"sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS,
					"sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT_MILLIS, ""),
					StandardCharsets.UTF_8);
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

	private static <T extends @Nullable Object> T withSentinel(HostAndPort sentinel,
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
	 * Returns the master's address: as started, and after a failover the master found by
	 * {@link #awaitFailover(Duration)}.
	 * @return the master's address
	 */
	public HostAndPort master() {
		return this.master.address();
	}

	/**
	 * Returns the master's port, see {@link #master()}.
	 * @return the port
	 */
	public int masterPort() {
		return this.master.port();
	}

	/**
	 * Returns the replica's address: after a failover, the old master's (also while it is killed).
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
	 * Returns synchronous commands on a harness-owned connection to the master (see
	 * {@link #master()}), closed by {@link #close()}. Fetch them again after a failover.
	 * @return the master's commands
	 * @throws IllegalStateException if the master is killed
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
	 * @return {@code true} until stopped, or a process was killed (or crashed) and not restarted
	 */
	public boolean isRunning() {
		return allNodes().stream().allMatch(RedisNode::isRunning);
	}

	/**
	 * Kills the current master with {@code SIGKILL} and waits until its process has exited. Follow
	 * with {@link #awaitFailover(Duration)}. The failover itself needs a majority of the sentinels
	 * running to elect a leader (quorum 1 only governs when the master counts as down).
	 * @return the killed master's address
	 * @throws IllegalStateException if the setup is stopped
	 */
	public HostAndPort killMaster() {
		RedisNode victim = this.master;
		victim.kill();
		return victim.address();
	}

	/**
	 * Waits until every running sentinel reports (with {@code SENTINEL get-master-addr-by-name}) the
	 * same master address, other than the current {@link #master()}, and that node answers
	 * {@code ROLE} as a master. Then {@link #master()}, {@link #masterPort()} and
	 * {@link #masterCommands()} refer to the new master and {@link #replica()} to the old one.
	 * @param timeout how long to wait at most
	 * @return the new master's address
	 * @throws IllegalStateException if no failover completes in time
	 */
	public HostAndPort awaitFailover(Duration timeout) {
		RedisNode previous = this.master;
		Await.until("the sentinels to fail over from " + previous.address(), timeout,
				() -> notFailedOver(previous));
		return master();
	}

	private @Nullable String notFailedOver(RedisNode previous) {
		Integer reportedPort = null;
		for (RedisNode sentinel : this.sentinels) {
			if (!sentinel.isRunning()) {
				continue;
			}
			SocketAddress reported = withSentinel(sentinel.address(),
					(commands) -> commands.getMasterAddrByName(MASTER_NAME));
			if (!(reported instanceof InetSocketAddress address) || address.getPort() == previous.port()) {
				return "sentinel " + sentinel.address() + " reports master " + reported;
			}
			if (reportedPort != null && reportedPort != address.getPort()) {
				return "sentinels disagree: " + reportedPort + " and " + address.getPort();
			}
			reportedPort = address.getPort();
		}
		if (reportedPort == null) {
			return "no sentinel is running";
		}
		int port = reportedPort;
		RedisNode promoted = this.dataNodes.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("The sentinels report a master on port " + port
					+ ", which is not a data node of this setup: " + this));
		List<Object> role = promoted.commands().role();
		if (role.isEmpty() || !"master".equals(String.valueOf(role.get(0)))) {
			return promoted.address() + " answers ROLE " + role;
		}
		this.replica = previous;
		this.master = promoted;
		return null;
	}

	/**
	 * Restarts the killed data nodes on their ports. One that is not the current {@link #master()}
	 * (an old master after {@link #awaitFailover(Duration)}) is made a replica of the current master
	 * with {@code REPLICAOF}, which the sentinels would otherwise only do after several seconds. Waits
	 * until the replica is linked and every sentinel knows it again. Does nothing if no data node is
	 * killed.
	 * @throws IllegalStateException if a node does not start or the setup does not converge in time
	 */
	public void restartKilled() {
		boolean restarted = false;
		for (RedisNode node : this.dataNodes) {
			if (node.isRunning()) {
				continue;
			}
			node.restart();
			restarted = true;
			if (node != this.master) {
				node.commands().replicaof(this.master.address().host(), this.master.port());
			}
		}
		if (restarted) {
			RedisNode currentReplica = this.replica;
			Await.until("the replica to link to the master", READY_TIMEOUT, () -> notLinked(currentReplica));
			Await.until("the sentinels to monitor " + MASTER_NAME, READY_TIMEOUT, this::notReady);
		}
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
