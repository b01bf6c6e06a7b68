package io.github.ratelimit.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One line of {@code CLUSTER NODES} output, for example
 * {@code 07c3... 127.0.0.1:30004@40004 myself,master - 0 0 1 connected 0-5460}.
 *
 * @param id the node id
 * @param host the announced host, empty while the node has not learned its own address
 * @param port the client port
 * @param flags flags such as {@code myself}, {@code master}, {@code slave}, {@code handshake}
 * @param masterId the id of the master for replicas, {@code -} for masters
 * @param connected whether the cluster bus link is {@code connected}
 */
record ClusterNodeEntry(String id, String host, int port, Set<String> flags, String masterId, boolean connected) {

	static List<ClusterNodeEntry> parse(String clusterNodes) {
		List<ClusterNodeEntry> entries = new ArrayList<>();
		for (String line : clusterNodes.split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length < 8) {
				continue;
			}
			String address = fields[1].split("@", 2)[0];
			int colon = address.lastIndexOf(':');
			entries.add(new ClusterNodeEntry(fields[0], address.substring(0, colon),
					Integer.parseInt(address.substring(colon + 1)), Set.of(fields[2].split(",")), fields[3],
					"connected".equals(fields[7])));
		}
		return entries;
	}

	boolean isMaster() {
		return this.flags.contains("master");
	}

	/** Whether the entry is fully established: known address, no handshake, no failure flags. */
	boolean isHealthy() {
		return this.connected && Ports.LOOPBACK_HOST.equals(this.host) && !this.flags.contains("handshake")
				&& !this.flags.contains("noaddr") && !this.flags.contains("fail") && !this.flags.contains("fail?");
	}

}
