package io.github.ratelimit.testkit;

/**
 * The loopback address of one started Redis process.
 *
 * @param host the host, always {@code 127.0.0.1} for processes started by this testkit
 * @param port the TCP port the process listens on
 */
public record HostAndPort(String host, int port) {

	/**
	 * Returns the address as a Redis URI.
	 * @return {@code redis://host:port}
	 */
	public String uri() {
		return "redis://" + this.host + ":" + this.port;
	}

	/**
	 * Returns the address in {@code host:port} form, as used by
	 * {@code spring.data.redis.cluster.nodes}.
	 * @return {@code host:port}
	 */
	@Override
	public String toString() {
		return this.host + ":" + this.port;
	}

}
