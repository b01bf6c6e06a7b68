package io.github.ratelimit.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RedisNodeTests {

	@Test
	void retriesOnAnotherPortWhenAnotherRedisAnswersOnThePort() {
		try (RedisServer occupant = RedisServer.start()) {
			RedisNode node = RedisNode.start("retry", firstThenFree(occupant.port()),
					NodeCommand.dataNode(List.of()));
			try {
				assertThat(node.port()).isNotEqualTo(occupant.port());
				assertThat(node.commands().info("server")).contains("process_id:" + node.pid());
			}
			finally {
				node.stop();
			}
		}
	}

	@Test
	void retriesOnAnotherPortWhenThePortCannotBeBound() throws IOException {
		try (ServerSocket occupant = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			RedisNode node = RedisNode.start("retry", firstThenFree(occupant.getLocalPort()),
					NodeCommand.dataNode(List.of()));
			try {
				assertThat(node.port()).isNotEqualTo(occupant.getLocalPort());
				assertThat(node.isRunning()).isTrue();
			}
			finally {
				node.stop();
			}
		}
	}

	@Test
	void reportsEveryAttemptWithTheLogTailWhenTheServerCannotStart() {
		assertThatIllegalStateException()
			.isThrownBy(() -> RedisNode.start("broken", Ports::freePort,
					NodeCommand.dataNode(List.of("--no-such-directive", "1"))))
			.withMessageContaining("after 4 attempts")
			.withMessageContaining("process exited with code")
			.withMessageContaining("no-such-directive");
	}

	@Test
	void theReaperEndsAFrozenNodeAndDeletesItsDirectory() {
		RedisNode node = RedisNode.start("reap", Ports::freePort, NodeCommand.dataNode(List.of()));
		try {
			long pid = node.pid();
			node.freeze();

			node.reap();

			assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
			assertThat(node.logFile()).doesNotExist();
		}
		finally {
			node.stop();
		}
	}

	@Test
	void restartKeepsTheDirectoryAndAppendsToTheLog() {
		RedisNode node = RedisNode.start("restart", Ports::freePort, NodeCommand.dataNode(List.of()));
		try {
			node.kill();
			node.restart();
			assertThat(node.logTail().split("Ready to accept connections", -1)).hasSize(3);
		}
		finally {
			node.stop();
		}
	}

	private static IntSupplier firstThenFree(int firstPort) {
		AtomicInteger calls = new AtomicInteger();
		return () -> (calls.getAndIncrement() == 0) ? firstPort : Ports.freePort();
	}

}
