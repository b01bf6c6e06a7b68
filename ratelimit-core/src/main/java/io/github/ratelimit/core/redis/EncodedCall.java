package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/** One script call as it goes on the wire, KEYS and ARGV encoded: every call the backend makes is one. */
@SuppressWarnings("ArrayRecordComponent") // never compared: a call is sent once
record EncodedCall(RedisScript<?> script, byte[][] keys, byte[][] args) {

	/** Encoded once per call, on every decision: plain loops, no streams. */
	static EncodedCall of(RedisScript<?> script, List<String> keys, String... args) {
		byte[][] encodedKeys = new byte[keys.size()][];
		for (int i = 0; i < encodedKeys.length; i++) {
			encodedKeys[i] = keys.get(i).getBytes(StandardCharsets.UTF_8);
		}
		byte[][] encodedArgs = new byte[args.length][];
		for (int i = 0; i < args.length; i++) {
			encodedArgs[i] = args[i].getBytes(StandardCharsets.UTF_8);
		}
		return new EncodedCall(script, encodedKeys, encodedArgs);
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
