package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Forgets rate-limit state: the entries' keys, or every key of a policy and an identity found with {@code SCAN} (on
 * every Cluster master, whatever the key's last part, so 0.1.0's too), each checked by {@link RateLimitKeys#matches}
 * and deleted one by one.
 */
final class KeyReset {

	private final RateLimitKeys keys;

	private final BackendConnection connection;

	KeyReset(RateLimitKeys keys, BackendConnection connection) {
		this.keys = keys;
		this.connection = connection;
	}

	/**
	 * Deletes the entries' keys and, for an algorithm whose layout changed since 0.1.0 (its key suffix is not its
	 * code), the key 0.1.0 counts under, so that a reset during a rolling upgrade reaches the old instances too.
	 */
	void reset(List<Entry> entries) {
		for (Entry entry : entries) {
			String key = this.keys.key(entry.policy(), entry.identity());
			Algorithm algorithm = entry.policy().algorithm();
			if (algorithm.keySuffix().equals(algorithm.code())) {
				this.connection.template().delete(key);
			}
			else {
				String released = key.substring(0, key.length() - algorithm.keySuffix().length()) + algorithm.code();
				this.connection.template().delete(List.of(key, released));
			}
		}
	}

	/** Deletes the keys of a policy, of an identity, or all (either may be null); returns how many. */
	long resetMatching(@Nullable String policyName, @Nullable String identity) {
		ScanOptions options = ScanOptions.scanOptions().match(this.keys.pattern(policyName, identity)).count(1000).build();
		List<String> found = new ArrayList<>();
		if (this.connection.isCluster()) {
			try (RedisClusterConnection cluster = this.connection.factory().getClusterConnection()) {
				for (RedisClusterNode node : cluster.clusterGetNodes()) {
					if (node.isMaster()) {
						collect(cluster.scan(node, options), policyName, identity, found);
					}
				}
			}
		}
		else {
			try (RedisConnection standalone = this.connection.factory().getConnection()) {
				collect(standalone.keyCommands().scan(options), policyName, identity, found);
			}
		}
		long removed = 0;
		for (String key : found) {
			if (Boolean.TRUE.equals(this.connection.template().delete(key))) {
				removed++;
			}
		}
		return removed;
	}

	private void collect(Cursor<byte[]> cursor, @Nullable String policyName, @Nullable String identity,
			List<String> found) {
		try (cursor) {
			while (cursor.hasNext()) {
				String key = new String(cursor.next(), StandardCharsets.UTF_8);
				if (this.keys.matches(key, policyName, identity)) {
					found.add(key);
				}
			}
		}
	}

}
