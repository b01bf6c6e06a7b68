package io.github.ratelimit.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kills every still-running node when the JVM exits, so that no {@code redis-server} outlives the
 * test JVM. A single shutdown hook serves all nodes; frozen ({@code SIGSTOP}) nodes are resumed
 * before they are killed. A node stays registered across kills and restarts until it is stopped.
 */
final class ProcessReaper {

	private static final Set<RedisNode> LIVE = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(ProcessReaper::reapAll, "ratelimit-redis-reaper"));
	}

	private ProcessReaper() {
	}

	static void register(RedisNode node) {
		LIVE.add(node);
	}

	static void unregister(RedisNode node) {
		LIVE.remove(node);
	}

	private static void reapAll() {
		LIVE.forEach(RedisNode::reap);
		LIVE.clear();
	}

}
