package io.github.ratelimit.testkit;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisSentinelServerTests {

	@Test
	void sentinelReportsTheMasterAndWritesThroughItReachMasterAndReplica() {
		RedisSentinelServer sentinel = RedisServers.sentinel();
		assertThat(sentinel.masterName()).isEqualTo("mymaster");
		HostAndPort sentinelAddress = sentinel.sentinels().get(0);
		RedisClient sentinelClient = TestClients
			.standalone(RedisURI.Builder.sentinel(sentinelAddress.host(), sentinelAddress.port(), "mymaster").build());
		try (StatefulRedisSentinelConnection<String, String> connection = sentinelClient.connectSentinel()) {
			InetSocketAddress master = (InetSocketAddress) connection.sync().getMasterAddrByName("mymaster");
			assertThat(master.getHostString()).isEqualTo("127.0.0.1");
			assertThat(master.getPort()).isEqualTo(sentinel.masterPort());
		}
		finally {
			TestClients.shutdown(sentinelClient);
		}

		RedisClient client = TestClients.standalone(sentinel.sentinelUri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			assertThat(connection.sync().set("through-sentinel", "yes")).isEqualTo("OK");
			assertThat(connection.sync().waitForReplication(1, 5000)).isEqualTo(1);
		}
		finally {
			TestClients.shutdown(client);
		}
		assertThat(sentinel.masterCommands().get("through-sentinel")).isEqualTo("yes");
		RedisClient replicaClient = TestClients.standalone(sentinel.replica());
		try (StatefulRedisConnection<String, String> replica = replicaClient.connect()) {
			assertThat(replica.sync().get("through-sentinel")).isEqualTo("yes");
		}
		finally {
			TestClients.shutdown(replicaClient);
		}
		sentinel.flushAll();
		assertThat(sentinel.masterCommands().dbsize()).isZero();
	}

	@Test
	void severalSentinelsKnowEachOtherAndStopEndsEveryProcess() {
		RedisSentinelServer sentinel = RedisSentinelServer.start(2);
		List<Integer> ports = sentinel.sentinelPorts();
		try {
			assertThat(ports).hasSize(2).doesNotHaveDuplicates().doesNotContain(sentinel.masterPort());
			assertThat(sentinel.sentinelUri())
				.isEqualTo("redis-sentinel://127.0.0.1:" + ports.get(0) + ",127.0.0.1:" + ports.get(1) + "#mymaster");
			RedisClient client = TestClients.standalone(sentinel.sentinelUri());
			try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel()) {
				assertThat(connection.sync().master("mymaster")).containsEntry("num-other-sentinels", "1")
					.containsEntry("num-slaves", "1");
			}
			finally {
				TestClients.shutdown(client);
			}
		}
		finally {
			sentinel.close();
		}
		assertThat(sentinel.isRunning()).isFalse();
		for (int port : ports) {
			assertThat(Ports.isFree(port)).isTrue();
		}
	}

	@Test
	void killMasterFailsOverToTheReplicaWhichAcceptsWritesAndTheOldMasterComesBackAsReplica() {
		try (RedisSentinelServer sentinel = RedisSentinelServer.start()) {
			HostAndPort oldMaster = sentinel.master();
			HostAndPort oldReplica = sentinel.replica();
			sentinel.masterCommands().set("before-failover", "1");
			assertThat(sentinel.masterCommands().waitForReplication(1, 5000)).isEqualTo(1);

			assertThat(sentinel.killMaster()).isEqualTo(oldMaster);
			assertThat(sentinel.isRunning()).isFalse();
			HostAndPort newMaster = sentinel.awaitFailover(Duration.ofSeconds(30));

			assertThat(newMaster).isEqualTo(oldReplica).isEqualTo(sentinel.master());
			assertThat(sentinel.masterPort()).isEqualTo(oldReplica.port());
			assertThat(sentinel.replica()).isEqualTo(oldMaster);
			assertThat(sentinel.masterCommands().role().get(0)).isEqualTo("master");
			assertThat(sentinel.masterCommands().get("before-failover")).isEqualTo("1");
			RedisClient client = TestClients.standalone(sentinel.sentinelUri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.set("after-failover", "2")).isEqualTo("OK");
				assertThat(commands.info("server")).contains("tcp_port:" + newMaster.port());
			}
			finally {
				TestClients.shutdown(client);
			}

			sentinel.restartKilled();

			assertThat(sentinel.isRunning()).isTrue();
			assertThat(sentinel.master()).isEqualTo(newMaster);
			RedisClient replicaClient = TestClients.standalone(oldMaster);
			try (StatefulRedisConnection<String, String> replica = replicaClient.connect()) {
				assertThat(replica.sync().info("replication")).contains("role:slave",
						"master_port:" + newMaster.port(), "master_link_status:up");
				assertThat(sentinel.masterCommands().waitForReplication(1, 5000)).isEqualTo(1);
				assertThat(replica.sync().get("after-failover")).isEqualTo("2");
			}
			finally {
				TestClients.shutdown(replicaClient);
			}
		}
	}

}
