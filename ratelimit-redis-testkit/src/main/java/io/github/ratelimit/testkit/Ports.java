package io.github.ratelimit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks free TCP ports on the loopback interface. A port is only known to be free at the moment
 * it is probed, so callers must be prepared to retry when a process fails to bind it.
 */
final class Ports {

	static final String LOOPBACK_HOST = "127.0.0.1";

	/** Redis 6.2 always listens for the cluster bus on the client port plus this offset. */
	static final int CLUSTER_BUS_OFFSET = 10000;

	private static final int CLUSTER_PORT_MIN = 20000;

	private static final int CLUSTER_PORT_MAX = 45000;

	private static final int CLUSTER_PORT_PROBES = 200;

	private Ports() {
	}

	/**
	 * Returns a port that the operating system reported as free.
	 * @return a free loopback port
	 */
	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, loopback())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not find a free port on " + LOOPBACK_HOST, ex);
		}
	}

	/**
	 * Returns a port {@code P} such that both {@code P} and its cluster bus port
	 * {@code P + 10000} are free.
	 * @return a free loopback port whose cluster bus port is free too
	 */
	static int freeClusterPort() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		for (int i = 0; i < CLUSTER_PORT_PROBES; i++) {
			int port = random.nextInt(CLUSTER_PORT_MIN, CLUSTER_PORT_MAX + 1);
			if (isFree(port) && isFree(port + CLUSTER_BUS_OFFSET)) {
				return port;
			}
		}
		throw new IllegalStateException("Could not find a free port P in " + CLUSTER_PORT_MIN + ".."
				+ CLUSTER_PORT_MAX + " with P+" + CLUSTER_BUS_OFFSET + " free as well after " + CLUSTER_PORT_PROBES
				+ " probes");
	}

	/**
	 * Returns whether the port can currently be bound on the loopback interface.
	 * @param port the port
	 * @return {@code true} if a server socket could be bound to it
	 */
	static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress(loopback(), port), 1);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static InetAddress loopback() {
		try {
			return InetAddress.getByName(LOOPBACK_HOST);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
