package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * One script call as it goes on the wire: the script, and its KEYS and ARGV encoded for Lettuce's commands. Every
 * call the backend makes (the driver's, a policy's single-entry script, a batch) is one of these, sent by one method.
 * @param script the script
 * @param keys KEYS
 * @param args ARGV
 */
@SuppressWarnings("ArrayRecordComponent") // never compared: a call is sent once
record EncodedCall(RedisScript<?> script, byte[][] keys, byte[][] args) {

	/**
	 * A call of string keys and arguments.
	 * @param script the script
	 * @param keys KEYS
	 * @param args ARGV
	 * @return the call
	 */
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
		List<String> strings = new ArrayList<>(this.keys.length);
		for (byte[] key : this.keys) {
			strings.add(new String(key, StandardCharsets.UTF_8));
		}
		return strings;
	}

	/** ARGV as strings, for a client other than Lettuce (through the template). */
	Object[] argStrings() {
		Object[] strings = new Object[this.args.length];
		for (int i = 0; i < this.args.length; i++) {
			strings[i] = new String(this.args[i], StandardCharsets.UTF_8);
		}
		return strings;
	}

}
