package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest.Entry;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * One driver call: the entries of one hash slot and their KEYS and ARGV, in the layout described at the top of
 * {@code scripts/ratelimit.lua} (keep the two in step). {@link ScriptReply} reads the reply.
 */
final class ScriptCall {

	/** ARGV[1]: what the script does with the entries. */
	enum Mode {

		/** Checks every entry and takes the cost of each only when all admit. */
		ACQUIRE("a"),

		/** Gives back what the request took at the time its acquire returned. */
		RELEASE("r"),

		/** Checks every entry and takes nothing: the state as it stands. */
		INSPECT("p");

		private final String argument;

		Mode(String argument) {
			this.argument = argument;
		}

	}

	/** ARGV before the entries': mode, time and request id. */
	private static final int HEADER = 3;

	/** ARGV per entry. */
	private static final int ARGUMENTS_PER_ENTRY = 6;

	private final String requestId;

	/** For each entry of this call, its index in the request. */
	private final List<Integer> indexes = new ArrayList<>();

	private final List<String> keys = new ArrayList<>();

	private final List<Entry> entries = new ArrayList<>();

	private final Set<Algorithm> algorithms = EnumSet.noneOf(Algorithm.class);

	ScriptCall(String requestId) {
		this.requestId = requestId;
	}

	void add(int index, String key, Entry entry) {
		this.indexes.add(index);
		this.keys.add(key);
		this.entries.add(entry);
		this.algorithms.add(entry.policy().algorithm());
	}

	/** For each entry (in the order of KEYS and of the reply's figures), its index in the request. */
	List<Integer> indexes() {
		return this.indexes;
	}

	/** The algorithms of the entries, which choose the script. */
	Set<Algorithm> algorithms() {
		return this.algorithms;
	}

	/** The policies of this call, for a log (never the identities: they may be credentials). */
	String describe() {
		return "policies " + this.entries.stream().map((entry) -> entry.policy().name()).distinct().toList();
	}

	/** The time this call's entries were acquired at: one script, one clock. */
	long timeOf(List<Long> acquiredAtMicros) {
		return acquiredAtMicros.get(this.indexes.get(0));
	}

	/** The first sequence numbers of this call's entries, in the order of KEYS, from those of the request. */
	List<Long> sequencesOf(List<Long> sequences) {
		return this.indexes.stream().map(sequences::get).toList();
	}

	/** The call, encoded; {@code timeMicros} -1 for the server's clock, {@code sequences} a release's (or empty). */
	EncodedCall encoded(RedisScript<?> script, Mode mode, long timeMicros, List<Long> sequences) {
		return EncodedCall.of(script, this.keys, args(mode, timeMicros, sequences));
	}

	private String[] args(Mode mode, long timeMicros, List<Long> sequences) {
		int perEntry = (mode == Mode.RELEASE) ? ARGUMENTS_PER_ENTRY + 1 : ARGUMENTS_PER_ENTRY;
		String[] args = new String[HEADER + this.entries.size() * perEntry];
		args[0] = mode.argument;
		args[1] = (timeMicros >= 0) ? Long.toString(timeMicros) : "";
		// only a refund names its request (the windows give back once per id); on an acquire a unique string per call
		// costs Redis' Lua an interned string and its garbage collection
		args[2] = (mode == Mode.RELEASE) ? this.requestId : "";
		int i = HEADER;
		for (Entry entry : this.entries) {
			RateLimitPolicy policy = entry.policy();
			args[i++] = policy.algorithm().code();
			args[i++] = Long.toString(policy.limit());
			args[i++] = Long.toString(policy.windowMicros());
			args[i++] = Long.toString(policy.burst());
			args[i++] = Long.toString(entry.cost());
			args[i++] = Long.toString(policy.minIntervalMicros());
		}
		if (mode == Mode.RELEASE) {
			for (int j = 0; j < this.entries.size(); j++) {
				args[i++] = sequences.isEmpty() ? "0" : Long.toString(sequences.get(j));
			}
		}
		return args;
	}

}
