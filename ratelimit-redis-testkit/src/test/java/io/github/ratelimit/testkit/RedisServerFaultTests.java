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

class RedisServerFaultTests {

	private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

	private static final Duration WAIT = Duration.ofSeconds(5);

	@Test
	void killEndsTheProcessAndRestartServesOnTheSamePortWithoutTheOldData() throws IOException {
		try (RedisServer server = RedisServer.start()) {
			int port = server.port();
			long oldPid = server.pid();
			server.commands().set("before-kill", "1");

			server.kill();

			assertThat(server.isRunning()).isFalse();
			assertThat(ProcessHandle.of(oldPid).filter(ProcessHandle::isAlive)).isEmpty();
			assertThatExceptionOfType(ConnectException.class)
				.isThrownBy(() -> Resp.connect(server.address(), SHORT_TIMEOUT).close());
			assertThatIllegalStateException().isThrownBy(server::commands).withMessageContaining("not running");
			assertThat(server.logTail()).contains("Ready to accept connections"); // the directory is kept
			server.kill(); // no-op when already dead

			server.restart();

			assertThat(server.isRunning()).isTrue();
			assertThat(server.port()).isEqualTo(port);
			assertThat(server.pid()).isNotEqualTo(oldPid);
			assertThat(server.commands().ping()).isEqualTo("PONG");
			assertThat(server.commands().get("before-kill")).isNull();
			assertThat(server.commands().info("server")).contains("process_id:" + server.pid());
			RedisClient client = TestClients.standalone(server.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				assertThat(connection.sync().set("after-restart", "2")).isEqualTo("OK");
				assertThat(connection.sync().get("after-restart")).isEqualTo("2");
			}
			finally {
				TestClients.shutdown(client);
			}
		}
	}

	@Test
	void restartOfARunningServerReplacesItsProcessAndRenewsTheHarnessConnection() {
		try (RedisServer server = RedisServer.start()) {
			long oldPid = server.pid();
			assertThat(server.commands().ping()).isEqualTo("PONG");

			server.restart();

			assertThat(ProcessHandle.of(oldPid).filter(ProcessHandle::isAlive)).isEmpty();
			assertThat(server.pid()).isNotEqualTo(oldPid);
			assertThat(server.commands().info("server")).contains("process_id:" + server.pid());
		}
	}

	@Test
	void freezeMakesCommandsTimeOutAndThawAnswersThem() throws IOException {
		try (RedisServer server = RedisServer.start()) {
			RedisClient client = TestClients.withTimeout(server.address(), WAIT);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				RedisCommands<String, String> commands = connection.sync();
				assertThat(commands.ping()).isEqualTo("PONG");

				server.freeze();

				assertThat(server.isFrozen()).isTrue();
				assertThat(server.isRunning()).isTrue();
				connection.setTimeout(SHORT_TIMEOUT);
				assertThatExceptionOfType(RedisCommandTimeoutException.class).isThrownBy(commands::ping);
				connection.setTimeout(WAIT);
				// The listening socket stays open: the kernel completes the connect, nobody answers.
				try (Resp resp = Resp.connect(server.address(), SHORT_TIMEOUT)) {
					assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> resp.command("PING"));
				}

				server.thaw();

				assertThat(server.isFrozen()).isFalse();
				assertThat(commands.ping()).isEqualTo("PONG");
				assertThat(commands.set("after-thaw", "1")).isEqualTo("OK");
			}
			finally {
				TestClients.shutdown(client);
			}
		}
	}

	@Test
	void aFrozenServerIsThawedSoThatStopEndsItGracefully() {
		RedisServer server = RedisServer.start();
		long pid = server.pid();
		server.freeze();
		long started = System.nanoTime();

		server.stop();

		// Without SIGCONT the SIGTERM would wait for the 5 s stop timeout and its SIGKILL.
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
		assertThat(server.isFrozen()).isFalse();
		assertThat(server.isRunning()).isFalse();
		assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
		assertThat(Ports.isFree(server.port())).isTrue();
	}

	@Test
	void aFrozenServerCanBeKilledAndRestarted() {
		try (RedisServer server = RedisServer.start()) {
			server.freeze();

			server.kill();

			assertThat(server.isFrozen()).isFalse();
			assertThat(server.isRunning()).isFalse();
			assertThatIllegalStateException().isThrownBy(server::freeze).withMessageContaining("not running");
			server.restart();
			assertThat(server.commands().ping()).isEqualTo("PONG");
		}
	}

	@Test
	void faultsAreRejectedOnceStopped() {
		RedisServer server = RedisServer.start();
		server.stop();
		assertThatIllegalStateException().isThrownBy(server::kill).withMessageContaining("stopped");
		assertThatIllegalStateException().isThrownBy(server::freeze).withMessageContaining("stopped");
		assertThatIllegalStateException().isThrownBy(server::restart).withMessageContaining("stopped");
		server.thaw(); // not frozen: nothing to do
	}

}
