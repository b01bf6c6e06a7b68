package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.springframework.data.redis.core.script.RedisScript;

/** One script call as it goes on the wire, KEYS and ARGV encoded: every call the backend makes is one. */
@SuppressWarnings("ArrayRecordComponent") // never compared: a call is sent once
record EncodedCall(RedisScript<?> script, byte[][] keys, byte[][] args) {

	static EncodedCall of(RedisScript<?> script, List<String> keys, String... args) {
		return new EncodedCall(script, encode(keys.stream()), encode(Arrays.stream(args)));
	}

	private static byte[][] encode(Stream<String> values) {
		return values.map((value) -> value.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
	}

	/** KEYS as strings, for a client other than Lettuce (through the template). */
	List<String> keyStrings() {
		return Arrays.stream(this.keys).map((key) -> new String(key, StandardCharsets.UTF_8)).toList();
	}

	/** ARGV as strings, for a client other than Lettuce (through the template). */
	Object[] argStrings() {
		return Arrays.stream(this.args).map((arg) -> new String(arg, StandardCharsets.UTF_8)).toArray();
	}

}
