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
 * @param slots the slot ranges the node serves (importing and migrating entries are left out)
 */
record ClusterNodeEntry(String id, String host, int port, Set<String> flags, String masterId, boolean connected,
		List<SlotRange> slots) {

	static List<ClusterNodeEntry> parse(String clusterNodes) {
		List<ClusterNodeEntry> entries = new ArrayList<>();
		for (String line : clusterNodes.split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length < 8) {
				continue;
			}
			String address = fields[1].split("@", 2)[0];
			int colon = address.lastIndexOf(':');
			List<SlotRange> slots = new ArrayList<>();
			for (int i = 8; i < fields.length; i++) {
				if (!fields[i].startsWith("[")) {
					String[] bounds = fields[i].split("-", 2);
					int first = Integer.parseInt(bounds[0]);
					slots.add(new SlotRange(first, (bounds.length > 1) ? Integer.parseInt(bounds[1]) : first));
				}
			}
			entries.add(new ClusterNodeEntry(fields[0], address.substring(0, colon),
					Integer.parseInt(address.substring(colon + 1)), Set.of(fields[2].split(",")), fields[3],
					"connected".equals(fields[7]), List.copyOf(slots)));
		}
		return entries;
	}

	HostAndPort address() {
		return new HostAndPort(this.host, this.port);
	}

	boolean isMyself() {
		return this.flags.contains("myself");
	}

	/** Whether the node is marked {@code fail} or {@code fail?} by the node that reported it. */
	boolean isFailing() {
		return this.flags.contains("fail") || this.flags.contains("fail?");
	}

	int slotCount() {
		return this.slots.stream().mapToInt(SlotRange::size).sum();
	}

	boolean serves(int slot) {
		return this.slots.stream().anyMatch((range) -> range.first() <= slot && slot <= range.last());
	}

	boolean isMaster() {
		return this.flags.contains("master");
	}

	/** Whether the entry is fully established: known address, no handshake, no failure flags. */
	boolean isHealthy() {
		return this.connected && Ports.LOOPBACK_HOST.equals(this.host) && !this.flags.contains("handshake")
				&& !this.flags.contains("noaddr") && !isFailing();
	}

	/**
	 * An inclusive range of hash slots.
	 *
	 * @param first the first slot
	 * @param last the last slot
	 */
	record SlotRange(int first, int last) {

		int size() {
			return this.last - this.first + 1;
		}

	}

}
