package io.github.ratelimit.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedisClusterServerTests {

	private final RedisClusterServer cluster = RedisServers.cluster();

	@Test
	void everyNodeReportsStateOkWithAllSlotsAssigned() {
		assertThat(this.cluster.masters()).hasSize(3);
		assertThat(this.cluster.nodes()).containsExactlyElementsOf(this.cluster.masters());
		for (HostAndPort node : this.cluster.nodes()) {
			assertThat(node.port() + 10000).isLessThanOrEqualTo(65535);
			withNode(node, (commands) -> {
				String info = commands.clusterInfo();
				assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3",
						"cluster_size:3");
				return null;
			});
		}
	}

	@Test
	void clusterClientWritesKeysThatLandOnEveryMaster() {
		HostAndPort first = this.cluster.masters().get(0);
		List<SlotOwner> owners = withNode(first, (commands) -> SlotOwner.parse(commands.clusterNodes()));
		Map<HostAndPort, String> keyPerMaster = new HashMap<>();
		withNode(first, (commands) -> {
			for (int i = 0; keyPerMaster.size() < 3 && i < 1000; i++) {
				String key = "key-" + i;
				int slot = commands.clusterKeyslot(key).intValue();
				keyPerMaster.putIfAbsent(SlotOwner.ownerOf(owners, slot), key);
			}
			return null;
		});
		assertThat(keyPerMaster.keySet()).containsExactlyInAnyOrderElementsOf(this.cluster.masters());

		RedisClusterClient client = TestClients.cluster(this.cluster.seedUris());
		try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
			keyPerMaster.forEach((master, key) -> {
				assertThat(connection.sync().set(key, "on-" + master.port())).isEqualTo("OK");
				assertThat(connection.sync().get(key)).isEqualTo("on-" + master.port());
			});
		}
		finally {
			TestClients.shutdown(client);
		}
		keyPerMaster.forEach((master, key) -> {
			assertThat(this.cluster.masterForKey(key)).isEqualTo(master);
			String stored = withNode(master, (commands) -> commands.get(key));
			assertThat(stored).isEqualTo("on-" + master.port());
		});
		this.cluster.flushAll();
		for (HostAndPort master : this.cluster.masters()) {
			long keys = withNode(master, RedisCommands::dbsize);
			assertThat(keys).isZero();
		}
	}

	@Test
	void replicasFollowTheirMastersAndStopReleasesEveryPort() throws IOException {
		RedisClusterServer withReplicas = RedisClusterServer.start(2, 1);
		List<HostAndPort> nodes = withReplicas.nodes();
		try {
			assertThat(withReplicas.replicas()).hasSize(2);
			for (int i = 0; i < 2; i++) {
				HostAndPort master = withReplicas.masters().get(i);
				HostAndPort replica = withReplicas.replicas().get(i);
				String masterId = withNode(master, RedisCommands::clusterMyId);
				String replicaLine = withNode(replica, RedisCommands::clusterNodes).lines()
					.filter((line) -> line.contains("myself"))
					.findFirst()
					.orElseThrow();
				assertThat(replicaLine).contains("slave", masterId);
			}
			String info = withNode(withReplicas.masters().get(0), RedisCommands::clusterInfo);
			assertThat(info).contains("cluster_state:ok", "cluster_known_nodes:4", "cluster_size:2");
		}
		finally {
			withReplicas.close();
		}
		assertThat(withReplicas.isRunning()).isFalse();
		for (HostAndPort node : nodes) {
			assertPortFree(node.port());
			assertPortFree(node.port() + 10000);
		}
		withReplicas.close(); // idempotent
	}

	@Test
	void aKilledMasterIsFailedOverToItsReplicaAndRejoinsAsAReplica() {
		RedisClusterServer cluster = RedisClusterServer.start(3, 1);
		try {
			HostAndPort victim = cluster.masters().get(0);
			HostAndPort heir = cluster.replicas().get(0);
			List<HostAndPort> otherMasters = cluster.masters().subList(1, 3);
			String key = keyServedBy(cluster, victim);
			withNode(victim, (commands) -> {
				commands.set(key, "before-failover");
				return commands.waitForReplication(1, 5000);
			});

			cluster.killMaster(victim);
			assertThat(cluster.isRunning()).isFalse();
			List<HostAndPort> masters = cluster.awaitFailover(Duration.ofSeconds(30));

			assertThat(masters).isEqualTo(cluster.masters()).containsExactly(heir, otherMasters.get(0),
					otherMasters.get(1));
			assertThat(cluster.replicas()).startsWith(victim);
			assertThat(cluster.masterForKey(key)).isEqualTo(heir);
			for (HostAndPort node : cluster.nodes()) {
				if (node.equals(victim)) {
					continue;
				}
				String info = withNode(node, RedisCommands::clusterInfo);
				assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384");
				List<SlotOwner> owners = withNode(node, (commands) -> SlotOwner.parse(commands.clusterNodes()));
				assertThat(SlotOwner.ownerOf(owners, 0)).isEqualTo(heir);
				assertThat(SlotOwner.ownerOf(owners, RedisClusterServer.SLOT_COUNT - 1)).isEqualTo(otherMasters.get(1));
			}
			String replicated = withNode(heir, (commands) -> commands.get(key));
			assertThat(replicated).isEqualTo("before-failover");
			RedisClusterClient client = TestClients.cluster(List.of(heir.uri(), otherMasters.get(0).uri()));
			try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
				assertThat(connection.sync().set(key, "after-failover")).isEqualTo("OK");
			}
			finally {
				TestClients.shutdown(client);
			}

			cluster.restart(victim);

			assertThat(cluster.isRunning()).isTrue();
			assertThat(cluster.masters()).containsExactly(heir, otherMasters.get(0), otherMasters.get(1));
			String heirId = withNode(heir, RedisCommands::clusterMyId);
			String victimLine = withNode(victim, RedisCommands::clusterNodes).lines()
				.filter((line) -> line.contains("myself"))
				.findFirst()
				.orElseThrow();
			assertThat(victimLine).contains("slave", heirId);

			RedisClient probe = TestClients.standalone(victim);
			try (StatefulRedisConnection<String, String> connection = probe.connect()) {
				assertThat(connection.sync().ping()).isEqualTo("PONG");
				cluster.freeze(victim);
				connection.setTimeout(Duration.ofMillis(300));
				assertThatExceptionOfType(RedisCommandTimeoutException.class).isThrownBy(connection.sync()::ping);
				connection.setTimeout(Duration.ofSeconds(10));
				cluster.thaw(victim);
				assertThat(connection.sync().ping()).isEqualTo("PONG");
			}
			finally {
				TestClients.shutdown(probe);
			}
		}
		finally {
			cluster.close();
		}
	}

	private static String keyServedBy(RedisClusterServer cluster, HostAndPort master) {
		for (int i = 0; i < 10_000; i++) {
			if (cluster.masterForKey("key-" + i).equals(master)) {
				return "key-" + i;
			}
		}
		throw new IllegalStateException("No key for " + master);
	}

	private static void assertPortFree(int port) throws IOException {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
			assertThat(socket.getLocalPort()).isEqualTo(port);
		}
	}

	private static <T> T withNode(HostAndPort node, NodeAction<T> action) {
		RedisClient client = TestClients.standalone(node);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection.sync());
		}
		finally {
			TestClients.shutdown(client);
		}
	}

	@FunctionalInterface
	private interface NodeAction<T> {

		T apply(RedisCommands<String, String> commands);

	}

	/** A master and its slot ranges, parsed from {@code CLUSTER NODES} independently of the harness. */
	private record SlotOwner(HostAndPort address, List<int[]> ranges) {

		static List<SlotOwner> parse(String clusterNodes) {
			List<SlotOwner> owners = new ArrayList<>();
			clusterNodes.lines().map((line) -> line.split(" ")).filter((fields) -> fields[2].contains("master"))
				.forEach((fields) -> {
					String[] hostPort = fields[1].split("@")[0].split(":");
					List<int[]> ranges = Arrays.stream(fields, 8, fields.length).map((range) -> {
						String[] bounds = range.split("-");
						int from = Integer.parseInt(bounds[0]);
						return new int[] { from, (bounds.length > 1) ? Integer.parseInt(bounds[1]) : from };
					}).toList();
					owners.add(new SlotOwner(new HostAndPort(hostPort[0], Integer.parseInt(hostPort[1])), ranges));
				});
			return owners;
		}

		static HostAndPort ownerOf(List<SlotOwner> owners, int slot) {
			Optional<SlotOwner> owner = owners.stream()
				.filter((candidate) -> candidate.ranges.stream().anyMatch((r) -> r[0] <= slot && slot <= r[1]))
				.findFirst();
			return owner.orElseThrow().address();
		}

	}

}
