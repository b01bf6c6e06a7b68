package io.github.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.github.ratelimit.core.Algorithm;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Assembles the Lua scripts from {@code scripts/}: the prelude, the sorted-set helpers when a call uses an algorithm
 * that {@linkplain Algorithm#keepsEntries() keeps entries}, the files of the algorithms a call uses, then the driver.
 * One script per set of algorithms, built once: a call only carries the code it runs, and its SHA-1 is stable, so
 * EVALSHA finds it after the first load.
 */
final class LuaScripts {

	private static final String PRELUDE = read("common.lua");

	private static final String DRIVER = read("ratelimit.lua");

	/** Helpers of the algorithms kept in sorted sets, included only when one of them is used. */
	private static final String SORTED_SET = read("sorted-set.lua");

	private static final Map<Algorithm, String> ALGORITHMS = new EnumMap<>(Algorithm.class);

	/** The mask of the algorithms that keep entries, whose files use the sorted-set helpers. */
	private static final int SORTED_SET_ALGORITHMS;

	static {
		int sortedSet = 0;
		for (Algorithm algorithm : Algorithm.values()) {
			ALGORITHMS.put(algorithm, read(algorithm.id() + ".lua"));
			if (algorithm.keepsEntries()) {
				sortedSet |= 1 << algorithm.ordinal();
			}
		}
		SORTED_SET_ALGORITHMS = sortedSet;
	}

	@SuppressWarnings("rawtypes")
	private final AtomicReferenceArray<RedisScript<List>> scripts = new AtomicReferenceArray<>(
			1 << Algorithm.values().length);

	/**
	 * The script that evaluates entries of these algorithms.
	 * @param algorithms the algorithms of the call
	 * @return the assembled script
	 */
	@SuppressWarnings("rawtypes")
	RedisScript<List> forAlgorithms(Collection<Algorithm> algorithms) {
		int mask = 0;
		for (Algorithm algorithm : algorithms) {
			mask |= 1 << algorithm.ordinal();
		}
		RedisScript<List> script = this.scripts.get(mask);
		if (script == null) {
			script = new AssembledScript(source(mask));
			this.scripts.compareAndSet(mask, null, script);
		}
		return script;
	}

	/**
	 * An immutable script whose SHA-1 is computed once. Spring's {@code DefaultRedisScript} takes a lock on every
	 * {@code getSha1()}, which an event loop should not do on each request.
	 */
	@SuppressWarnings("rawtypes")
	private static final class AssembledScript implements RedisScript<List> {

		private final String source;

		private final String sha1;

		AssembledScript(String source) {
			this.source = source;
			try {
				this.sha1 = HexFormat.of()
					.formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
			}
			catch (NoSuchAlgorithmException ex) {
				throw new IllegalStateException("SHA-1 is required by every Java platform", ex);
			}
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

	/**
	 * The source of the script for an algorithm mask; visible for tests and tooling.
	 * @param mask bit {@code ordinal} set for each algorithm included
	 * @return the Lua source
	 */
	static String source(int mask) {
		StringBuilder source = new StringBuilder(PRELUDE);
		if ((mask & SORTED_SET_ALGORITHMS) != 0) {
			source.append('\n').append(SORTED_SET);
		}
		for (Algorithm algorithm : Algorithm.values()) {
			if ((mask & (1 << algorithm.ordinal())) != 0) {
				source.append('\n').append(ALGORITHMS.get(algorithm));
			}
		}
		return source.append('\n').append(DRIVER).toString();
	}

	private static String read(String name) {
		String path = "scripts/" + name;
		try (InputStream in = LuaScripts.class.getClassLoader().getResourceAsStream(path)) {
			if (in == null) {
				throw new IllegalStateException("Missing rate-limit script on the classpath: " + path);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read rate-limit script " + path, ex);
		}
	}

}
