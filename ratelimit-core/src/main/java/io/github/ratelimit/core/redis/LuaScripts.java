package io.github.ratelimit.core.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DigestUtils;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Assembles and caches the Lua scripts from {@code scripts/}: one driver script per set of algorithms, and the
 * single-entry scripts with a policy's parameters written in (architecture, "The engine").
 */
final class LuaScripts {

	/** The prefix of the names of functions and their libraries; the script's SHA-1 follows. */
	static final String FUNCTION_PREFIX = "ratelimit_";

	private static final String PRELUDE = read("common.lua");

	private static final String DRIVER = read("ratelimit.lua");

	/** Helpers of the algorithms kept in sorted sets, included only when one of them is used. */
	private static final String SORTED_SET = read("sorted-set.lua");

	private static final Map<Algorithm, String> ALGORITHMS = new EnumMap<>(Algorithm.class);

	/** The straight-through single-entry scripts, by algorithm; absent for the algorithms that use the driver. */
	private static final Map<Algorithm, String> FAST = new EnumMap<>(Algorithm.class);

	/** decide() through the algorithms' files, for the algorithms without a straight-through script. */
	private static final String SINGLE = read("single.lua");

	private static final String SINGLE_CALL = read("single-call.lua");

	private static final String BATCH_CALL = read("batch-call.lua");

	private static final String CLUSTER_BATCH_CALL = read("cluster-batch-call.lua");

	/** The first line of a script that reads keys of several slots of its node (Redis 7; 6.2 cannot compile it). */
	static final String CROSS_SLOT_SHEBANG = "#!lua flags=allow-cross-slot-keys\n";

	/** Taking and giving back slices of leased policies' quota ({@code scripts/lease.lua}): parameters in ARGV. */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> LEASE = new AssembledScript(read("lease.lua"));

	/** A script that only reaches its key's server ({@link RedisRateLimitBackend#probe}). */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> PROBE = new AssembledScript("return {}");

	/** Single-entry scripts made at most (parameter sets, overrides included), so Redis' script cache stays small. */
	static final int MAX_SINGLE_ENTRY_SCRIPTS = 1024;

	static {
		for (Algorithm algorithm : Algorithm.values()) {
			ALGORITHMS.put(algorithm, read(algorithm.id() + ".lua"));
			if (script("fast/" + algorithm.id() + ".lua").exists()) {
				FAST.put(algorithm, read("fast/" + algorithm.id() + ".lua"));
			}
		}
	}

	/** The driver scripts by algorithm mask (bit {@code ordinal} per algorithm). */
	@SuppressWarnings("rawtypes")
	private final Map<Integer, RedisScript<List>> scripts = new ConcurrentHashMap<>();

	private final Map<Parameters, PolicyScripts> singleEntry = new ConcurrentHashMap<>();

	/**
	 * The scripts of one set of policy parameters: the call of one request, of several (a batch), and of several
	 * whose keys are in several slots of one Cluster master.
	 */
	@SuppressWarnings("rawtypes")
	record PolicyScripts(RedisScript<List> single, RedisScript<List> batch, RedisScript<List> clusterBatch) {
	}

	/** What a single-entry script has written into it: the policy's parameters that decide. */
	private record Parameters(Algorithm algorithm, long limit, long windowMicros, long burst, long minIntervalMicros) {
	}

	/**
	 * The single-entry scripts of this policy's parameters (layouts in {@code scripts/single-call.lua} and
	 * {@code scripts/batch-call.lua}), or null once {@value #MAX_SINGLE_ENTRY_SCRIPTS} exist (the driver then runs).
	 */
	@Nullable PolicyScripts forSingleEntry(RateLimitPolicy policy) {
		Parameters parameters = new Parameters(policy.algorithm(), policy.limit(), policy.windowMicros(),
				policy.burst(), policy.minIntervalMicros());
		PolicyScripts scripts = this.singleEntry.get(parameters);
		if (scripts == null && this.singleEntry.size() < MAX_SINGLE_ENTRY_SCRIPTS) {
			scripts = this.singleEntry.computeIfAbsent(parameters,
					(p) -> new PolicyScripts(new AssembledScript(singleEntrySource(p, "", SINGLE_CALL)),
							new AssembledScript(singleEntrySource(p, "", BATCH_CALL)), new AssembledScript(
									singleEntrySource(p, CROSS_SLOT_SHEBANG, clusterBatchCall(p.algorithm())))));
		}
		return scripts;
	}

	/** The call of a Cluster master's batch: which reply an undecided request gets, then the two layers of calls. */
	private static String clusterBatchCall(Algorithm algorithm) {
		return "local KEEPS_ENTRIES = " + algorithm.keepsEntries() + "\n" + CLUSTER_BATCH_CALL + "\n" + BATCH_CALL;
	}

	/** The driver script for entries of these algorithms. */
	@SuppressWarnings("rawtypes")
	RedisScript<List> forAlgorithms(Collection<Algorithm> algorithms) {
		int mask = algorithms.stream().mapToInt((algorithm) -> 1 << algorithm.ordinal()).reduce(0, (a, b) -> a | b);
		return this.scripts.computeIfAbsent(mask, (m) -> new AssembledScript(source(m)));
	}

	/** A script whose SHA-1 is computed once: Spring's {@code DefaultRedisScript} locks on every {@code getSha1()}. */
	@SuppressWarnings("rawtypes")
	private static final class AssembledScript implements RedisScript<List> {

		private final String source;

		private final String sha1;

		private final String functionName;

		AssembledScript(String source) {
			this.source = source;
			this.sha1 = DigestUtils.sha1DigestAsHex(source);
			this.functionName = FUNCTION_PREFIX + this.sha1;
		}

		@Override
		public String getSha1() {
			return this.sha1;
		}

		@Override
		public Class<List> getResultType() {
			return List.class;
		}

		@Override
		public String getScriptAsString() {
			return this.source;
		}

	}

	/** The name of a script's function and library: from its SHA-1, so a name never gets different code. */
	static String functionName(RedisScript<?> script) {
		return (script instanceof AssembledScript assembled) ? assembled.functionName
				: FUNCTION_PREFIX + script.getSha1();
	}

	/**
	 * The library ({@code FUNCTION LOAD}) registering a script as a function: the body is its callback, and a
	 * script's cross-slot shebang becomes the function's flag.
	 */
	static String library(RedisScript<?> script) {
		String name = functionName(script);
		String body = script.getScriptAsString();
		if (body.startsWith(CROSS_SLOT_SHEBANG)) {
			return "#!lua name=" + name + "\nredis.register_function{ function_name = '" + name
					+ "', flags = { 'allow-cross-slot-keys' }, callback = function(KEYS, ARGV)\n"
					+ body.substring(CROSS_SLOT_SHEBANG.length()) + "\nend }\n";
		}
		return "#!lua name=" + name + "\nredis.register_function('" + name + "', function(KEYS, ARGV)\n" + body
				+ "\nend)\n";
	}

	/** The driver script's source for an algorithm mask (bit {@code ordinal} per algorithm). */
	private static String source(int mask) {
		return assemble(new StringBuilder("local EXPLICIT_TIME = ARGV[2] ~= ''\n"), mask).append('\n')
			.append(DRIVER)
			.toString();
	}

	/**
	 * A single-entry script's source: the shebang if any, the parameters in the next line, decide(), and the call
	 * (one request's, a batch's or a Cluster master's batch).
	 */
	private static String singleEntrySource(Parameters p, String shebang, String call) {
		Algorithm algorithm = p.algorithm();
		boolean batch = !SINGLE_CALL.equals(call);
		StringBuilder source = new StringBuilder(shebang).append("local CODE, LIMIT, WINDOW, BURST, MIN = '")
			.append(algorithm.code())
			.append("', " + p.limit() + ", " + p.windowMicros() + ", ")
			.append(p.burst() + ", " + p.minIntervalMicros() + "\n")
			.append(batch ? "local EXPLICIT_TIME = ARGV[1] ~= ''\n" : "local EXPLICIT_TIME = ARGV[2] ~= nil\n");
		String fast = FAST.get(algorithm);
		if (fast != null) {
			source.append(fast);
		}
		else {
			assemble(source, 1 << algorithm.ordinal()).append('\n').append(SINGLE);
		}
		return source.append('\n').append(call).toString();
	}

	private static StringBuilder assemble(StringBuilder source, int mask) {
		List<Algorithm> used = Arrays.stream(Algorithm.values())
			.filter((algorithm) -> (mask & (1 << algorithm.ordinal())) != 0)
			.toList();
		source.append(PRELUDE);
		if (used.stream().anyMatch(Algorithm::keepsEntries)) {
			source.append('\n').append(SORTED_SET);
		}
		used.forEach((algorithm) -> source.append('\n').append(ALGORITHMS.get(algorithm)));
		return source;
	}

	private static String read(String name) {
		try {
			return script(name).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read rate-limit script scripts/" + name, ex);
		}
	}

	private static ClassPathResource script(String name) {
		return new ClassPathResource("scripts/" + name, LuaScripts.class.getClassLoader());
	}

}
