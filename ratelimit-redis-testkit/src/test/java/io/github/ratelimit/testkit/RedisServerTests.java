package io.github.ratelimit.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RedisServerTests {

	@Test
	void answersPingSetAndGetOnItsPort() {
		try (RedisServer server = RedisServer.start()) {
			assertThat(server.host()).isEqualTo("127.0.0.1");
			assertThat(server.port()).isNotEqualTo(6379);
			assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
			RedisClient client = TestClients.standalone(server.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.ping()).isEqualTo("PONG");
				assertThat(commands.set("greeting", "hello")).isEqualTo("OK");
				assertThat(commands.get("greeting")).isEqualTo("hello");
				assertThat(commands.info("server")).contains("process_id:" + server.pid());
			}
			finally {
				TestClients.shutdown(client);
			}
		}
	}

	@Test
	void runsWithoutPersistence() {
		try (RedisServer server = RedisServer.start()) {
			RedisCommands<String, String> commands = server.commands();
			assertThat(commands.configGet("save")).containsEntry("save", "");
			assertThat(commands.configGet("appendonly")).containsEntry("appendonly", "no");
			assertThat(commands.configGet("bind")).containsEntry("bind", "127.0.0.1");
		}
	}

	@Test
	void twoServersGetDifferentPortsAndProcesses() {
		try (RedisServer first = RedisServer.start(); RedisServer second = RedisServer.start()) {
			assertThat(first.port()).isNotEqualTo(second.port());
			assertThat(first.pid()).isNotEqualTo(second.pid());
			first.commands().set("key", "first");
			assertThat(second.commands().get("key")).isNull();
		}
	}

	@Test
	void stopEndsTheProcessAndFreesThePort() throws IOException {
		RedisServer server = RedisServer.start();
		long pid = server.pid();
		int port = server.port();
		server.commands().ping();
		assertThat(server.isRunning()).isTrue();

		server.stop();

		assertThat(server.isRunning()).isFalse();
		assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
			assertThat(socket.getLocalPort()).isEqualTo(port);
		}
		server.close(); // idempotent
		assertThatIllegalStateException().isThrownBy(server::connection).withMessageContaining("stopped");
	}

	@Test
	void harnessConnectionSupportsAssertionsAndFlushAll() {
		try (RedisServer server = RedisServer.start()) {
			server.commands().psetex("limited", 60_000, "1");
			assertThat(server.commands().pttl("limited")).isBetween(1L, 60_000L);
			server.flushAll();
			assertThat(server.commands().dbsize()).isZero();
		}
	}

	@Test
	void passesExtraArguments() {
		try (RedisServer server = RedisServer.start(List.of("--maxmemory", "2mb"))) {
			assertThat(server.commands().configGet("maxmemory")).containsEntry("maxmemory", String.valueOf(2 * 1024 * 1024));
			assertThat(server.logTail()).contains("Ready to accept connections");
		}
	}

	@Test
	void sharedStandaloneIsStartedOnce() {
		RedisServer shared = RedisServers.standalone();
		assertThat(RedisServers.standalone()).isSameAs(shared);
		assertThat(shared.commands().ping()).isEqualTo("PONG");
	}

}
