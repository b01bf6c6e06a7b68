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
 * One script call: the entries of one hash slot, and what goes in the script's KEYS and ARGV for them. The layout is
 * the one described at the top of {@code scripts/ratelimit.lua}; keep the two in step:
 * <ul>
 * <li>KEYS: one key per entry;</li>
 * <li>ARGV[1]: the {@link Mode mode}, {@code a} to acquire or {@code r} to release;</li>
 * <li>ARGV[2]: the explicit time in microseconds, or empty for the server's TIME (a release passes the time its
 * acquire returned);</li>
 * <li>ARGV[3]: the request id on a release (the windows keep it to refund once), empty on an acquire: no
 * algorithm's acquire stores it;</li>
 * <li>then six per entry, in the order of KEYS: the algorithm's code, the limit, the window (microseconds), the
 * burst, the cost and the minimum interval (microseconds);</li>
 * <li>on a release, then one per entry: the first sequence number its acquire took (0 for none; see
 * {@link ScriptReply#sequences}).</li>
 * </ul>
 * The reply is read by {@link ScriptReply}.
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

	/** The request's explicit time, or -1 for the server's clock. */
	private final long explicitTimeMicros;

	/** For each entry of this call, its index in the request. */
	private final List<Integer> indexes = new ArrayList<>();

	private final List<String> keys = new ArrayList<>();

	private final List<Entry> entries = new ArrayList<>();

	private final Set<Algorithm> algorithms = EnumSet.noneOf(Algorithm.class);

	/**
	 * A call with no entry yet.
	 * @param requestId the request id
	 * @param explicitTimeMicros the request's explicit time, or -1 for the server's clock
	 */
	ScriptCall(String requestId, long explicitTimeMicros) {
		this.requestId = requestId;
		this.explicitTimeMicros = explicitTimeMicros;
	}

	/**
	 * Adds an entry.
	 * @param index the entry's index in the request
	 * @param key its Redis key
	 * @param entry the entry
	 */
	void add(int index, String key, Entry entry) {
		this.indexes.add(index);
		this.keys.add(key);
		this.entries.add(entry);
		this.algorithms.add(entry.policy().algorithm());
	}

	/**
	 * The request's explicit time.
	 * @return the time in microseconds, or -1 for the server's clock
	 */
	long explicitTimeMicros() {
		return this.explicitTimeMicros;
	}

	/**
	 * For each entry of this call (in the order of KEYS and of the reply's figures), its index in the request.
	 * @return the indexes
	 */
	List<Integer> indexes() {
		return this.indexes;
	}

	/**
	 * KEYS.
	 * @return one key per entry
	 */
	List<String> keys() {
		return this.keys;
	}

	/**
	 * The algorithms of the entries, which choose the script.
	 * @return the algorithms
	 */
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
		List<Long> own = new ArrayList<>(this.indexes.size());
		for (int index : this.indexes) {
			own.add(sequences.get(index));
		}
		return own;
	}

	/**
	 * The call, encoded for Lettuce's commands.
	 * @param script the script that evaluates this call's algorithms
	 * @param mode acquire, release or inspect
	 * @param timeMicros the time to pass, or -1 for the server's clock
	 * @param sequences on a release, the first sequence number of each entry of this call (empty: none)
	 * @return the script, KEYS and ARGV
	 */
	EncodedCall encoded(RedisScript<?> script, Mode mode, long timeMicros, List<Long> sequences) {
		return EncodedCall.of(script, this.keys, args(mode, timeMicros, sequences));
	}

	/**
	 * ARGV.
	 * @param mode acquire or release
	 * @param timeMicros the time to pass, or -1 for the server's clock
	 * @param sequences on a release, the first sequence number of each entry of this call (empty: none)
	 * @return the arguments
	 */
	String[] args(Mode mode, long timeMicros, List<Long> sequences) {
		int perEntry = (mode == Mode.RELEASE) ? ARGUMENTS_PER_ENTRY + 1 : ARGUMENTS_PER_ENTRY;
		String[] args = new String[HEADER + this.entries.size() * perEntry];
		args[0] = mode.argument;
		args[1] = (timeMicros >= 0) ? Long.toString(timeMicros) : "";
		// a refund of a window names its request, to give back once; an acquire never does: the buckets name their
		// acquire by its time, the sorted sets by their sequence, and a unique string per call costs Redis' Lua an
		// interned string and its garbage collection
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
