package io.github.ratelimit.core.redis;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A token bucket's key read back for tests (the layout: architecture.md, "The token bucket's state"): the tokens,
 * their time, the time of the acquire refunded last (-1 for none) and the leases' records by instance.
 */
record PackedBucket(double tokens, double time, double refunded, Map<String, Slice> records) {

	/** An instance's record: what it was granted and kept, when that lapses, and the number of the call that wrote it. */
	record Slice(double amount, double lapse, double number) {
	}

	/** {@return the bucket at a key, null when there is none} */
	static @Nullable PackedBucket read(StringRedisTemplate redis, String key) {
		byte[] raw = redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
			.get(key.getBytes(StandardCharsets.UTF_8)));
		return (raw != null) ? of(raw) : null;
	}

	static PackedBucket of(byte[] raw) {
		ByteBuffer in = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
		double tokens = in.getDouble();
		double time = in.getDouble();
		double refunded = in.hasRemaining() ? in.getDouble() : -1;
		Map<String, Slice> records = new TreeMap<>();
		while (in.hasRemaining()) {
			Slice slice = new Slice(in.getDouble(), in.getDouble(), in.getDouble());
			byte[] instance = new byte[in.get() & 0xff];
			in.get(instance);
			records.put(new String(instance, StandardCharsets.UTF_8), slice);
		}
		return new PackedBucket(tokens, time, refunded, records);
	}

}
