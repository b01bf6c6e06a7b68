package io.github.ratelimit.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;

/**
 * A real Redis Cluster of {@code redis-server} processes on free loopback ports, bootstrapped
 * without {@code redis-cli}: {@code CLUSTER MEET}, {@code CLUSTER ADDSLOTS} (slots split evenly
 * over the masters), optional {@code CLUSTER REPLICATE}, then a bounded wait until every node
 * reports {@code cluster_state:ok} with all 16384 slots assigned and sees every other node
 * connected.
 *
 * <p>Redis 6.2 listens for the cluster bus on {@code port + 10000}, so node ports are chosen such
 * that both ports are free. For a cluster shared by all test classes of the JVM use
 * {@link RedisServers#cluster()}.
 */
public final class RedisClusterServer implements AutoCloseable {

	/** The number of hash slots of a Redis Cluster. */
	public static final int SLOT_COUNT = SlotHash.SLOT_COUNT;

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private static final String NODE_TIMEOUT_MILLIS = "5000";

	private final List<RedisNode> masters;

	private final List<RedisNode> replicas;

	private RedisClusterServer(List<RedisNode> masters, List<RedisNode> replicas) {
		this.masters = List.copyOf(masters);
		this.replicas = List.copyOf(replicas);
	}

	/**
	 * Starts a cluster of three masters without replicas.
	 * @return the running, fully formed cluster
	 */
	public static RedisClusterServer start() {
		return start(3, 0);
	}

	/**
	 * Starts a cluster.
	 * @param masterCount the number of masters, at least 1
	 * @param replicasPerMaster the number of replicas of each master, at least 0
	 * @return the running, fully formed cluster
	 * @throws IllegalStateException if a node does not start or the cluster does not form in time
	 */
	public static RedisClusterServer start(int masterCount, int replicasPerMaster) {
		if (masterCount < 1 || replicasPerMaster < 0) {
			throw new IllegalArgumentException(
					"Need at least one master and no negative replica count, got " + masterCount + "/" + replicasPerMaster);
		}
		List<RedisNode> masters = new ArrayList<>();
		List<RedisNode> replicas = new ArrayList<>();
		try {
			for (int i = 0; i < masterCount; i++) {
				masters.add(startNode("cluster-master-" + i));
			}
			for (int i = 0; i < masterCount * replicasPerMaster; i++) {
				replicas.add(startNode("cluster-replica-" + i));
			}
			RedisClusterServer cluster = new RedisClusterServer(masters, replicas);
			cluster.bootstrap(replicasPerMaster);
			return cluster;
		}
		catch (RuntimeException ex) {
			List<RedisNode> started = new ArrayList<>(masters);
			started.addAll(replicas);
			RedisNode.stopAll(started);
			throw ex;
		}
	}

	private static RedisNode startNode(String name) {
		return RedisNode.start(name, Ports::freeClusterPort, RedisClusterServer::clusterArguments);
	}

	private static List<String> clusterArguments(int port, Path directory) throws IOException {
		return NodeCommand
			.dataNode(List.of("--cluster-enabled", "yes", "--cluster-config-file",
					directory.resolve("nodes.conf").toString(), "--cluster-node-timeout", NODE_TIMEOUT_MILLIS))
			.arguments(port, directory);
	}

	private void bootstrap(int replicasPerMaster) {
		List<RedisNode> all = allNodes();
		for (int i = 0; i < all.size(); i++) {
			all.get(i).commands().clusterSetConfigEpoch(i + 1);
		}
		// Every node meets every other node: no waiting for gossip to spread, and every node receives
		// a MEET, which is how a node learns its own address.
		for (RedisNode node : all) {
			for (RedisNode other : all) {
				if (other != node) {
					node.commands().clusterMeet(other.address().host(), other.port());
				}
			}
		}
		for (int i = 0; i < this.masters.size(); i++) {
			this.masters.get(i).commands().clusterAddSlots(slotsOf(i));
		}
		Await.until("all cluster nodes to know each other", READY_TIMEOUT, this::notAllNodesKnown);
		for (int i = 0; i < this.replicas.size(); i++) {
			String masterId = this.masters.get(i / replicasPerMaster).commands().clusterMyId();
			this.replicas.get(i).commands().clusterReplicate(masterId);
		}
		Await.until("the cluster to be ready", READY_TIMEOUT, this::notReady);
	}

	private int[] slotsOf(int masterIndex) {
		return IntStream.range(firstSlot(masterIndex), firstSlot(masterIndex + 1)).toArray();
	}

	private int firstSlot(int masterIndex) {
		return masterIndex * SLOT_COUNT / this.masters.size();
	}

	private @Nullable String notAllNodesKnown() {
		for (RedisNode node : allNodes()) {
			List<ClusterNodeEntry> entries = ClusterNodeEntry.parse(node.commands().clusterNodes());
			long healthy = entries.stream().filter(ClusterNodeEntry::isHealthy).count();
			if (entries.size() != allNodes().size() || healthy != entries.size()) {
				return node.address() + " knows " + entries.size() + " nodes, " + healthy + " healthy";
			}
		}
		return null;
	}

	private @Nullable String notReady() {
		String notKnown = notAllNodesKnown();
		if (notKnown != null) {
			return notKnown;
		}
		for (RedisNode node : allNodes()) {
			RedisCommands<String, String> commands = node.commands();
			String info = commands.clusterInfo();
			if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_assigned:" + SLOT_COUNT)) {
				return node.address() + " reports " + info.replace("\r\n", ", ");
			}
			long mastersSeen = ClusterNodeEntry.parse(commands.clusterNodes())
				.stream()
				.filter(ClusterNodeEntry::isMaster)
				.count();
			if (mastersSeen != this.masters.size()) {
				return node.address() + " sees " + mastersSeen + " masters";
			}
		}
		for (RedisNode replica : this.replicas) {
			if (!replica.commands().info("replication").contains("master_link_status:up")) {
				return "replica " + replica.address() + " has no replication link to its master yet";
			}
		}
		return null;
	}

	private List<RedisNode> allNodes() {
		List<RedisNode> all = new ArrayList<>(this.masters);
		all.addAll(this.replicas);
		return all;
	}

	/**
	 * Returns all nodes, masters first.
	 * @return the node addresses
	 */
	public List<HostAndPort> nodes() {
		return allNodes().stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the masters, in slot order: the first master serves the lowest slots.
	 * @return the master addresses
	 */
	public List<HostAndPort> masters() {
		return this.masters.stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the replicas; replica {@code i} replicates master {@code i / replicasPerMaster}.
	 * @return the replica addresses, empty without replicas
	 */
	public List<HostAndPort> replicas() {
		return this.replicas.stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the URIs of all nodes, for use as cluster client seeds.
	 * @return {@code redis://127.0.0.1:<port>} for every node
	 */
	public List<String> seedUris() {
		return nodes().stream().map(HostAndPort::uri).toList();
	}

	/**
	 * Returns the master serving a hash slot.
	 * @param slot the slot, {@code 0..16383}
	 * @return the master's address
	 */
	public HostAndPort masterForSlot(int slot) {
		if (slot < 0 || slot >= SLOT_COUNT) {
			throw new IllegalArgumentException("Slot out of range: " + slot);
		}
		int index = 0;
		while (index + 1 < this.masters.size() && firstSlot(index + 1) <= slot) {
			index++;
		}
		return this.masters.get(index).address();
	}

	/**
	 * Returns the master serving a key, honouring hash tags ({@code {tag}}).
	 * @param key the key
	 * @return the master's address
	 */
	public HostAndPort masterForKey(String key) {
		return masterForSlot(SlotHash.getSlot(key));
	}

	/** Deletes all keys on every master (replicas follow through replication). */
	public void flushAll() {
		this.masters.forEach((master) -> master.commands().flushall());
	}

	/**
	 * Returns whether every node process is still running.
	 * @return {@code true} until stopped (or a node crashed)
	 */
	public boolean isRunning() {
		return allNodes().stream().allMatch(RedisNode::isRunning);
	}

	/** Stops all nodes, waits for them to exit and deletes their directories. Idempotent. */
	public void stop() {
		RedisNode.stopAll(allNodes());
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	@Override
	public String toString() {
		return "RedisClusterServer[masters=" + masters() + ", replicas=" + replicas() + "]";
	}

}
