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
 *
 * <p>Failover tests (on a cluster of their own, with replicas):
 * <pre>{@code
 * RedisClusterServer cluster = RedisClusterServer.start(3, 1);
 * HostAndPort victim = cluster.masters().get(0);
 * cluster.killMaster(victim);                     // SIGKILL
 * cluster.awaitFailover(Duration.ofSeconds(30));  // its replica took over, cluster_state:ok
 * cluster.restart(victim);                        // back, now as a replica of the new master
 * }</pre>
 * Nodes run with a {@code cluster-node-timeout} of 2 s, so a killed or frozen master is failed
 * over within a few seconds.
 *
 * <p>Partial outages (a master without replicas killed while the others serve on): start the
 * cluster with {@link #start(int, int, boolean) start(3, 0, false)}, whose nodes run with
 * {@code cluster-require-full-coverage no}. With Redis's default ({@code yes}) every node refuses
 * every command with {@code CLUSTERDOWN} once a slot has no live master.
 */
public final class RedisClusterServer implements AutoCloseable {

	/** The number of hash slots of a Redis Cluster. */
	public static final int SLOT_COUNT = SlotHash.SLOT_COUNT;

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration REJOIN_TIMEOUT = Duration.ofSeconds(30);

	/** Short, so that failovers take seconds; still long enough not to mistake a busy node for a dead one. */
	private static final String NODE_TIMEOUT_MILLIS = "2000";

	/** All nodes, as started: masters first, then replicas. */
	private final List<RedisNode> nodes;

	/** Group {@code g}: the node started as master {@code g}, then the replicas started for it. */
	private final List<List<RedisNode>> groups;

	/** The current master of each group, in slot order; changed by failovers. */
	private volatile List<RedisNode> masters;

	private RedisClusterServer(List<RedisNode> masters, List<RedisNode> replicas) {
		List<RedisNode> all = new ArrayList<>(masters);
		all.addAll(replicas);
		this.nodes = List.copyOf(all);
		int replicasPerMaster = replicas.size() / masters.size();
		List<List<RedisNode>> groupList = new ArrayList<>();
		for (int g = 0; g < masters.size(); g++) {
			List<RedisNode> group = new ArrayList<>();
			group.add(masters.get(g));
			group.addAll(replicas.subList(g * replicasPerMaster, (g + 1) * replicasPerMaster));
			groupList.add(List.copyOf(group));
		}
		this.groups = List.copyOf(groupList);
		this.masters = List.copyOf(masters);
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
		return start(masterCount, replicasPerMaster, true);
	}

	/**
	 * Starts a cluster, choosing what its nodes do while a slot has no live master.
	 * @param masterCount the number of masters, at least 1
	 * @param replicasPerMaster the number of replicas of each master, at least 0
	 * @param requireFullCoverage {@code cluster-require-full-coverage}: true (Redis's default) to refuse
	 * every command once a slot is uncovered, false to go on serving the slots that are covered
	 * @return the running, fully formed cluster
	 * @throws IllegalStateException if a node does not start or the cluster does not form in time
	 */
	public static RedisClusterServer start(int masterCount, int replicasPerMaster, boolean requireFullCoverage) {
		if (masterCount < 1 || replicasPerMaster < 0) {
			throw new IllegalArgumentException(
					"Need at least one master and no negative replica count, got " + masterCount + "/" + replicasPerMaster);
		}
		List<RedisNode> masters = new ArrayList<>();
		List<RedisNode> replicas = new ArrayList<>();
		try {
			for (int i = 0; i < masterCount; i++) {
				masters.add(startNode("cluster-master-" + i, requireFullCoverage));
			}
			for (int i = 0; i < masterCount * replicasPerMaster; i++) {
				replicas.add(startNode("cluster-replica-" + i, requireFullCoverage));
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

	private static RedisNode startNode(String name, boolean requireFullCoverage) {
		return RedisNode.start(name, Ports::freeClusterPort,
				(port, directory) -> clusterArguments(port, directory, requireFullCoverage));
	}

	private static List<String> clusterArguments(int port, Path directory, boolean requireFullCoverage)
			throws IOException {
		return NodeCommand
			.dataNode(List.of("--cluster-enabled", "yes", "--cluster-config-file",
					directory.resolve("nodes.conf").toString(), "--cluster-node-timeout", NODE_TIMEOUT_MILLIS,
					"--cluster-require-full-coverage", requireFullCoverage ? "yes" : "no"))
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
		for (List<RedisNode> group : this.groups) {
			String masterId = group.get(0).commands().clusterMyId();
			for (RedisNode replica : group.subList(1, group.size())) {
				replica.commands().clusterReplicate(masterId);
			}
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
		for (RedisNode replica : replicaNodes()) {
			if (!replica.commands().info("replication").contains("master_link_status:up")) {
				return "replica " + replica.address() + " has no replication link to its master yet";
			}
		}
		return null;
	}

	/** The current masters, then every other node grouped by the master it belongs to. */
	private List<RedisNode> allNodes() {
		List<RedisNode> all = new ArrayList<>(this.masters);
		all.addAll(replicaNodes());
		return all;
	}

	private List<RedisNode> replicaNodes() {
		List<RedisNode> currentMasters = this.masters;
		List<RedisNode> result = new ArrayList<>();
		for (List<RedisNode> group : this.groups) {
			group.stream().filter((node) -> !currentMasters.contains(node)).forEach(result::add);
		}
		return result;
	}

	/**
	 * Returns all nodes, masters first.
	 * @return the node addresses
	 */
	public List<HostAndPort> nodes() {
		return allNodes().stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the masters, in slot order: the first master serves the lowest slots. After a failover
	 * this is the view of the last {@link #awaitFailover(Duration)} or {@link #restart(HostAndPort)}.
	 * @return the master addresses
	 */
	public List<HostAndPort> masters() {
		return this.masters.stream().map(RedisNode::address).toList();
	}

	/**
	 * Returns the replicas; replica {@code i} replicates master {@code i / replicasPerMaster}. After
	 * a failover the old master takes its promoted replica's place in this list (also while it is
	 * killed).
	 * @return the replica addresses, empty without replicas
	 */
	public List<HostAndPort> replicas() {
		return replicaNodes().stream().map(RedisNode::address).toList();
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
	 * Returns whether every node process is still running (frozen ones count as running).
	 * @return {@code true} until stopped, or a node was killed (or crashed) and not restarted
	 */
	public boolean isRunning() {
		return this.nodes.stream().allMatch(RedisNode::isRunning);
	}

	/**
	 * Kills a master with {@code SIGKILL} and waits until its process has exited. Follow with
	 * {@link #awaitFailover(Duration)}; with no replica for that master the cluster stays down.
	 * @param master the address of a current master, see {@link #masters()}
	 * @throws IllegalArgumentException if the address is not a current master
	 */
	public void killMaster(HostAndPort master) {
		RedisNode node = node(master);
		if (!this.masters.contains(node)) {
			throw new IllegalArgumentException(master + " is not a current master; masters are " + masters());
		}
		node.kill();
	}

	/**
	 * Kills any node (master or replica) with {@code SIGKILL} and waits until its process has
	 * exited. Its directory, and so its cluster identity ({@code nodes.conf}), is kept for
	 * {@link #restart(HostAndPort)}.
	 * @param node the node's address
	 * @throws IllegalArgumentException if the address is not a node of this cluster
	 */
	public void kill(HostAndPort node) {
		node(node).kill();
	}

	/**
	 * Suspends a node with {@code SIGSTOP}: it keeps its sockets but answers neither clients nor the
	 * cluster bus. A master frozen for longer than the node timeout is failed over like a killed one.
	 * @param node the node's address
	 * @throws IllegalArgumentException if the address is not a node of this cluster
	 */
	public void freeze(HostAndPort node) {
		node(node).freeze();
	}

	/**
	 * Resumes a node frozen by {@link #freeze(HostAndPort)}. A master that was failed over meanwhile
	 * turns itself into a replica of its successor.
	 * @param node the node's address
	 * @throws IllegalArgumentException if the address is not a node of this cluster
	 */
	public void thaw(HostAndPort node) {
		node(node).thaw();
	}

	/**
	 * Waits until the cluster has healed around killed or frozen nodes: every node that runs and is
	 * not frozen reports {@code cluster_state:ok}, and in each one's view all 16384 slots are served
	 * by masters that run and are not frozen. Then {@link #masters()} reflects the new masters.
	 * @param timeout how long to wait at most
	 * @return the current masters in slot order
	 * @throws IllegalStateException if the cluster does not heal in time
	 */
	public List<HostAndPort> awaitFailover(Duration timeout) {
		Await.until("every slot to be served by a running master", timeout, this::notFailedOver);
		return masters();
	}

	/**
	 * Restarts a killed (or running) node on the same port with the same cluster identity, and waits
	 * until it has rejoined: it reports {@code cluster_state:ok}, the other live nodes no longer
	 * flag it as failing, and, if it is a replica, its replication link is up. A master that was
	 * failed over comes back as a replica of its successor.
	 * @param node the node's address
	 * @throws IllegalArgumentException if the address is not a node of this cluster
	 * @throws IllegalStateException if the node does not start or rejoin in time
	 */
	public void restart(HostAndPort node) {
		RedisNode restarted = node(node);
		restarted.restart();
		Await.until(node + " to rejoin the cluster", REJOIN_TIMEOUT, () -> notRejoined(restarted));
	}

	private RedisNode node(HostAndPort address) {
		return this.nodes.stream()
			.filter((node) -> node.address().equals(address))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException(
					address + " is not a node of this cluster; nodes are " + nodes()));
	}

	private List<RedisNode> liveNodes() {
		return this.nodes.stream().filter((node) -> node.isRunning() && !node.isFrozen()).toList();
	}

	private @Nullable String notFailedOver() {
		List<RedisNode> live = liveNodes();
		if (live.isEmpty()) {
			return "no node is running";
		}
		List<ClusterNodeEntry> view = List.of();
		for (RedisNode node : live) {
			String info = node.commands().clusterInfo();
			if (!info.contains("cluster_state:ok")) {
				return node.address() + " reports " + info.replace("\r\n", ", ");
			}
			view = ClusterNodeEntry.parse(node.commands().clusterNodes());
			String problem = slotsNotServedByLiveMasters(view, live);
			if (problem != null) {
				return "in the view of " + node.address() + ", " + problem;
			}
		}
		this.masters = mastersIn(view);
		return null;
	}

	private @Nullable String slotsNotServedByLiveMasters(List<ClusterNodeEntry> view, List<RedisNode> live) {
		int served = 0;
		for (ClusterNodeEntry entry : view) {
			if (entry.slots().isEmpty()) {
				continue;
			}
			boolean isLive = live.stream().anyMatch((node) -> node.address().equals(entry.address()));
			if (!entry.isMaster() || entry.isFailing() || !isLive) {
				return entry.slotCount() + " slots are served by " + entry.address() + " " + entry.flags()
						+ (isLive ? "" : ", which is killed or frozen");
			}
			served += entry.slotCount();
		}
		return (served == SLOT_COUNT) ? null : "only " + served + " slots are served";
	}

	/** The node serving each group's first slot, in the given view. */
	private List<RedisNode> mastersIn(List<ClusterNodeEntry> view) {
		List<RedisNode> result = new ArrayList<>();
		for (int g = 0; g < this.groups.size(); g++) {
			int slot = firstSlot(g);
			HostAndPort owner = view.stream()
				.filter((entry) -> entry.isMaster() && entry.serves(slot))
				.map(ClusterNodeEntry::address)
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("No master serves slot " + slot));
			result.add(node(owner));
		}
		return List.copyOf(result);
	}

	private @Nullable String notRejoined(RedisNode restarted) {
		String info = restarted.commands().clusterInfo();
		if (!info.contains("cluster_state:ok")) {
			return restarted.address() + " reports " + info.replace("\r\n", ", ");
		}
		List<ClusterNodeEntry> view = ClusterNodeEntry.parse(restarted.commands().clusterNodes());
		ClusterNodeEntry myself = view.stream().filter(ClusterNodeEntry::isMyself).findFirst().orElse(null);
		if (myself == null) {
			return restarted.address() + " does not list itself";
		}
		if (!myself.isMaster() && !restarted.commands().info("replication").contains("master_link_status:up")) {
			return "replica " + restarted.address() + " has no replication link to its master yet";
		}
		for (RedisNode other : liveNodes()) {
			if (other == restarted) {
				continue;
			}
			List<ClusterNodeEntry> otherView = ClusterNodeEntry.parse(other.commands().clusterNodes());
			boolean seenHealthy = otherView.stream()
				.anyMatch((entry) -> entry.address().equals(restarted.address()) && entry.isHealthy()
						&& entry.isMaster() == myself.isMaster());
			if (!seenHealthy) {
				return other.address() + " does not see " + restarted.address() + " as a healthy "
						+ (myself.isMaster() ? "master" : "replica") + " yet";
			}
			view = otherView;
		}
		this.masters = mastersIn(view);
		return null;
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
