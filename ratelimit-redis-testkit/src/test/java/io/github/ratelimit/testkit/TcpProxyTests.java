package io.github.ratelimit.testkit;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpProxyTests {

	private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

	private static final Duration WAIT = Duration.ofSeconds(5);

	private final RedisServer redis = RedisServers.standalone();

	@Test
	void forwardsCommandsAndCountsConnections() throws IOException {
		try (TcpProxy proxy = TcpProxy.start(this.redis.address())) {
			assertThat(proxy.target()).isEqualTo(this.redis.address());
			assertThat(proxy.port()).isNotEqualTo(this.redis.port());
			assertThat(proxy.address()).isEqualTo(new HostAndPort("127.0.0.1", proxy.port()));
			assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());
			RedisClient client = TestClients.standalone(proxy.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.ping()).isEqualTo("PONG");
				assertThat(commands.set("through-proxy", "x".repeat(100_000))).isEqualTo("OK");
				assertThat(commands.get("through-proxy")).hasSize(100_000);
				assertThat(commands.clientList()).contains("laddr=127.0.0.1:" + this.redis.port());
				assertThat(proxy.connectionsAccepted()).isEqualTo(1);
				assertThat(proxy.openConnections()).isEqualTo(1);
			}
			finally {
				TestClients.shutdown(client);
			}
			awaitOpenConnections(proxy, 0);
			assertThat(proxy.connectionsAccepted()).isEqualTo(1);
			assertThat(this.redis.commands().del("through-proxy")).isEqualTo(1);
			proxy.close();
			assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> Resp.connect(proxy.address(), WAIT));
			proxy.close(); // idempotent
			assertThatIllegalStateException().isThrownBy(proxy::restore).withMessageContaining("closed");
		}
	}

	@Test
	void latencyLongerThanTheTimeoutMakesCommandsTimeOutUntilItIsRemoved() {
		try (TcpProxy proxy = TcpProxy.start(this.redis.address())) {
			RedisClient client = TestClients.withTimeout(proxy.address(), WAIT);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.ping()).isEqualTo("PONG");

				proxy.latency(SHORT_TIMEOUT.multipliedBy(2));
				connection.setTimeout(SHORT_TIMEOUT);
				assertThatExceptionOfType(RedisCommandTimeoutException.class).isThrownBy(commands::ping);

				connection.setTimeout(WAIT);
				proxy.latency(Duration.ZERO);
				assertThat(commands.ping()).isEqualTo("PONG");
			}
			finally {
				TestClients.shutdown(client);
			}
			assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1)))
				.isInstanceOf(IllegalArgumentException.class);
		}
	}

	@Test
	void blackholeHoldsEverythingBackUntilRestore() throws IOException {
		try (TcpProxy proxy = TcpProxy.start(this.redis.address())) {
			RedisClient client = TestClients.withTimeout(proxy.address(), WAIT);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.ping()).isEqualTo("PONG");

				proxy.blackhole();

				connection.setTimeout(SHORT_TIMEOUT);
				assertThatExceptionOfType(RedisCommandTimeoutException.class).isThrownBy(commands::ping);
				connection.setTimeout(WAIT);
				try (Resp resp = Resp.connect(proxy.address(), SHORT_TIMEOUT)) { // still accepted
					assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> resp.command("PING"));
					assertThat(proxy.openConnections()).isEqualTo(2);

					proxy.restore();

					resp.readTimeout(WAIT);
					assertThat(resp.readReply()).isEqualTo("+PONG"); // held back, then delivered
					assertThat(resp.command("PING")).isEqualTo("+PONG");
				}
				RedisClient fresh = TestClients.withTimeout(proxy.address(), WAIT);
				try (StatefulRedisConnection<String, String> freshConnection = fresh.connect()) {
					assertThat(freshConnection.sync().ping()).isEqualTo("PONG");
				}
				finally {
					TestClients.shutdown(fresh);
				}
				assertThat(commands.ping()).isEqualTo("PONG"); // the old connection is in sync too
			}
			finally {
				TestClients.shutdown(client);
			}
		}
	}

	@Test
	void resetAllBreaksOpenConnectionsAndKeepsAccepting() throws IOException {
		try (TcpProxy proxy = TcpProxy.start(this.redis.address()); Resp resp = Resp.connect(proxy.address(), WAIT)) {
			assertThat(resp.command("PING")).isEqualTo("+PONG");

			proxy.resetAll();

			assertThatThrownBy(() -> resp.command("PING")).isInstanceOf(IOException.class);
			awaitOpenConnections(proxy, 0);
			try (Resp next = Resp.connect(proxy.address(), WAIT)) {
				assertThat(next.command("PING")).isEqualTo("+PONG");
			}
			assertThat(proxy.connectionsAccepted()).isEqualTo(2);
		}
	}

	@Test
	void refuseRefusesConnectsUntilRestoreListensAgainOnTheSamePort() throws IOException {
		try (TcpProxy proxy = TcpProxy.start(this.redis.address()); Resp resp = Resp.connect(proxy.address(), WAIT)) {
			assertThat(resp.command("PING")).isEqualTo("+PONG");
			int port = proxy.port();

			proxy.refuse();

			assertThatThrownBy(() -> resp.command("PING")).isInstanceOf(IOException.class);
			assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> Resp.connect(proxy.address(), WAIT));
			awaitOpenConnections(proxy, 0);

			proxy.restore();

			assertThat(proxy.port()).isEqualTo(port);
			try (Resp next = Resp.connect(proxy.address(), WAIT)) {
				assertThat(next.command("PING")).isEqualTo("+PONG");
			}
		}
	}

	@Test
	void connectionsToATargetThatIsDownAreReset() throws IOException {
		try (RedisServer server = RedisServer.start(); TcpProxy proxy = TcpProxy.start(server.address())) {
			try (Resp resp = Resp.connect(proxy.address(), WAIT)) {
				assertThat(resp.command("PING")).isEqualTo("+PONG");
				server.kill();
				assertThatThrownBy(() -> resp.command("PING")).isInstanceOf(IOException.class);
			}
			// the proxy accepts, the target refuses: the proxy's reset reaches the client during its connect or at its
			// first command, depending on how the threads are scheduled
			assertThatThrownBy(() -> {
				try (Resp resp = Resp.connect(proxy.address(), WAIT)) {
					resp.command("PING");
				}
			}).isInstanceOf(IOException.class);
			server.restart();
			try (Resp resp = Resp.connect(proxy.address(), WAIT)) {
				assertThat(resp.command("PING")).isEqualTo("+PONG");
			}
		}
	}

	private static void awaitOpenConnections(TcpProxy proxy, int expected) {
		Await.until(expected + " open connections", WAIT,
				() -> (proxy.openConnections() == expected) ? null : proxy.openConnections() + " open");
	}

}
